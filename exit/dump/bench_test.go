package dump_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/idvault/idvault/exit/dump/gen"
)

// EnvBenchDump selects the size of BenchmarkGenerateDump: "full" is the target of the issue
// (100 000 users and about 1 000 000 key publishes, a few minutes; `make bench` sets it),
// "tenth" a tenth of it, anything else a 1/100 size that runs in seconds.
const EnvBenchDump = "IDVAULT_BENCH_DUMP"

// fullScale is the target size: 100 000 users; 315 000 resources give about 1 000 000 key
// publishes (3.2 per resource on average).
var fullScale = gen.Options{Users: 100_000, Groups: 10_000, Resources: 315_000}

type genRun struct {
	elapsed   time.Duration
	peakRSS   int64 // bytes
	publishes int
}

// BenchmarkGenerateDump generates a dump at the chosen size and, in the same run, one ten
// times smaller as the baseline. It reports the wall time, the key publishes per second,
// the peak resident memory of each and the ratios big/small: memory must stay flat (ratio
// near 1) while time grows linearly (near 10). As the machine may be shared, it also
// measures a raw Ed25519 signature on every core before and after (the baseline of the
// project's other figures) and reports the dump time in signatures, and that count at
// idleSign: the time the dump takes on an idle machine. At full size it reports that time as a
// fraction of the 5-minute target.
func BenchmarkGenerateDump(b *testing.B) {
	full := os.Getenv(EnvBenchDump) == "full"
	size := fullScale
	if div := map[bool]int{true: 10, false: 100}[os.Getenv(EnvBenchDump) == "tenth"]; !full {
		size = gen.Options{Users: fullScale.Users / div, Groups: fullScale.Groups / div, Resources: fullScale.Resources / div}
	}
	small := gen.Options{Users: size.Users / 10, Groups: size.Groups / 10, Resources: size.Resources / 10}
	for b.Loop() {
		signBefore := signTime()
		base := generateOnce(b, small)
		big := generateOnce(b, size)
		sign := (signBefore + signTime()) / 2
		inSigns := float64(big.elapsed) / float64(sign)
		b.ReportMetric(float64(sign.Nanoseconds())/1000, "µs/ed25519-sign-baseline")
		b.ReportMetric(inSigns, "dump-time-in-signs")
		b.ReportMetric(inSigns*idleSign.Seconds(), "s/dump-at-idle-sign-speed")
		b.ReportMetric(big.elapsed.Seconds(), "s/dump")
		b.ReportMetric(float64(big.publishes), "key-publishes")
		b.ReportMetric(float64(big.publishes)/big.elapsed.Seconds(), "key-publishes/s")
		b.ReportMetric(float64(big.peakRSS)/(1<<20), "peak-RSS-MiB")
		b.ReportMetric(float64(big.peakRSS)/float64(base.peakRSS), "peak-RSS-ratio-vs-1/10-size")
		b.ReportMetric(big.elapsed.Seconds()/base.elapsed.Seconds(), "time-ratio-vs-1/10-size")
		if full {
			b.ReportMetric(big.elapsed.Seconds()/300, "fraction-of-5min-target")
			b.ReportMetric(inSigns*idleSign.Seconds()/300, "fraction-of-5min-target-at-idle-sign-speed")
		}
	}
}

// idleSign is the Ed25519 signature time this benchmark's µs/ed25519-sign-baseline metric reports
// on an idle machine of 2 cores, the reference the dump's 5-minute target is set against.
const idleSign = 21300 * time.Nanosecond

// signTime measures one Ed25519 signature, with one signer per core for half a second: the
// wall time per signature per core, which slows down with the machine.
func signTime() time.Duration {
	priv := ed25519.NewKeyFromSeed(make([]byte, 32))
	msg := make([]byte, 32)
	workers := runtime.GOMAXPROCS(0)
	var total atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(0)
			for time.Since(start) < 500*time.Millisecond {
				ed25519.Sign(priv, msg)
				n++
			}
			total.Add(n)
		}()
	}
	wg.Wait()
	return time.Duration(int64(time.Since(start)) * int64(workers) / max(total.Load(), 1))
}

func generateOnce(b *testing.B, o gen.Options) genRun {
	b.Helper()
	o.Seed = 1
	dir := b.TempDir()
	debug.FreeOSMemory()
	resetPeakRSS()
	start := time.Now()
	sum, err := gen.Generate(context.Background(), dir, o)
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
