package store

import (
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkScatteredPages writes what a commit of new identities writes, without bbolt: 74 pages
// at random places of an 80 MiB file, one write each, fdatasync, the meta page, fdatasync. The
// file is cached as a plain read leaves it ("readahead") or as Open leaves it ("by-page",
// cacheByPage): the reason for pagecache_linux.go. It reports each commit's time and the
// process's CPU per commit.
func BenchmarkScatteredPages(b *testing.B) {
	const pageSize, pages, size = 4096, 74, 80 << 20
	for _, byPage := range []bool{false, true} {
		b.Run(map[bool]string{false: "readahead", true: "by-page"}[byPage], func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "data")
			if err := os.WriteFile(path, make([]byte, size), 0o600); err != nil {
				b.Fatal(err)
			}
			f, err := os.OpenFile(path, os.O_RDWR, 0)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if err := f.Sync(); err != nil {
				b.Fatal(err)
			}
			dropCache(b, path)
			if byPage {
				cacheByPage(path)
			} else if _, err := io.Copy(io.Discard, io.NewSectionReader(f, 0, size)); err != nil {
				b.Fatal(err)
			}
			page := make([]byte, pageSize)
			elapsed, cpu := runCommits(b, f, func(int) error {
				for range pages {
					if _, err := f.WriteAt(page, pageSize*rand.Int64N(size/pageSize)); err != nil {
						return err
					}
				}
				return nil
			})
			b.ReportMetric(float64(elapsed.Microseconds())/1000/float64(b.N), "ms/commit")
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu_ms/commit")
		})
	}
}
