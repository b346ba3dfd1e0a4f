//go:build linux

package store

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkCommitPattern writes what a bbolt commit writes, without bbolt: 12 new pages after
// the data, fdatasync, the meta page, fdatasync, into a file whose room past the data is a hole
// (as bbolt's truncate leaves it) or written blocks (as fileAhead leaves it). It reports each
// commit's time and the process's CPU per page written: the reason for ahead.go. Linux only: it calls
// fdatasync, as bbolt's commit does there, which darwin's syscall package lacks (without the
// constraint the store's tests did not build for darwin, a release platform).
func BenchmarkCommitPattern(b *testing.B) {
	const pageSize, pages, room = 4096, 12, 256 << 20
	for _, written := range []bool{false, true} {
		name := "hole"
		if written {
			name = "written"
		}
		b.Run(name, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "data"))
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if written {
				if err := writeZeros(f, 0, room); err != nil {
					b.Fatal(err)
				}
			} else if err := f.Truncate(room); err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, pages*pageSize)
			elapsed, cpu := runCommits(b, f, func(i int) error {
				off := int64(pageSize) * int64(2+(i*pages)%(room/pageSize-pages-2))
				_, err := f.WriteAt(buf, off)
				return err
			})
			b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(b.N), "ms/commit")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N*(pages+1)), "cpu_µs/page")
		})
	}
}

// runCommits runs b.N commits on f as bbolt's commit writes: write(i) writes the i-th commit's
// pages, then fdatasync, the meta page (page 0), fdatasync. It returns their time and the
// process's CPU meanwhile.
func runCommits(b *testing.B, f *os.File, write func(i int) error) (elapsed, cpu time.Duration) {
	meta := make([]byte, 4096)
	cpu0 := processCPU()
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if err := write(i); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
		if _, err := f.WriteAt(meta, 0); err != nil {
			b.Fatal(err)
		}
		if err := syscall.Fdatasync(int(f.Fd())); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start), processCPU() - cpu0
}

// processCPU is the process's user and system CPU time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
