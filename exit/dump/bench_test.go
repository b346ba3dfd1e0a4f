package dump_test

import (
	"bufio"
	"context"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"idvault/exit/dump"
)

// EnvBenchDump selects the size of BenchmarkGenerateDump: "full" is the target of the issue
// (100 000 users and about 1 000 000 key publishes, a few minutes; `make bench` sets it),
// anything else a 1/100 size that runs in seconds.
const EnvBenchDump = "IDVAULT_BENCH_DUMP"

// fullScale is the target size: 100 000 users; 315 000 resources give about 1 000 000 key
// publishes (3.2 per resource on average).
var fullScale = dump.Options{Users: 100_000, Groups: 10_000, Resources: 315_000}

type genRun struct {
	elapsed   time.Duration
	peakRSS   int64 // bytes
	publishes int
}

// BenchmarkGenerateDump generates a dump at the chosen size and, in the same run, one ten
// times smaller as the baseline. It reports the wall time, the key publishes per second,
// the peak resident memory of each and the ratios big/small: memory must stay flat (ratio
// near 1) while time grows linearly (near 10). At full size it also reports the time as a
// fraction of the 5-minute target.
func BenchmarkGenerateDump(b *testing.B) {
	full := os.Getenv(EnvBenchDump) == "full"
	size := fullScale
	if !full {
		size = dump.Options{Users: fullScale.Users / 100, Groups: fullScale.Groups / 100, Resources: fullScale.Resources / 100}
	}
	small := dump.Options{Users: size.Users / 10, Groups: size.Groups / 10, Resources: size.Resources / 10}
	for b.Loop() {
		base := generateOnce(b, small)
		big := generateOnce(b, size)
		b.ReportMetric(big.elapsed.Seconds(), "s/dump")
		b.ReportMetric(float64(big.publishes), "key-publishes")
		b.ReportMetric(float64(big.publishes)/big.elapsed.Seconds(), "key-publishes/s")
		b.ReportMetric(float64(big.peakRSS)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(big.peakRSS)/float64(base.peakRSS), "peak-RSS-ratio-vs-1/10-size")
		b.ReportMetric(big.elapsed.Seconds()/base.elapsed.Seconds(), "time-ratio-vs-1/10-size")
		if full {
			b.ReportMetric(big.elapsed.Seconds()/300, "fraction-of-5min-target")
		}
	}
}

func generateOnce(b *testing.B, o dump.Options) genRun {
	b.Helper()
	o.Seed = 1
	dir := b.TempDir()
	debug.FreeOSMemory()
	resetPeakRSS()
	start := time.Now()
	sum, err := dump.Generate(context.Background(), dir, o)
	if err != nil {
		b.Fatal(err)
	}
	r := genRun{elapsed: time.Since(start), peakRSS: peakRSS(), publishes: sum.Rows["key_publishes"]}
	_ = os.RemoveAll(dir)
	return r
}

// resetPeakRSS resets the kernel's high-water mark of this process's resident memory.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSS reads VmHWM from /proc/self/status (0 when unavailable).
func peakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
