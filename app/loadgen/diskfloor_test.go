package loadgen_test

import (
	"math/rand/v2"
	"os"
	"testing"
	"time"
)

// diskPage is the size of the pages written by diskFloor: bbolt's page size here (the
// operating system's page size when the data file was made).
var diskPage = int64(os.Getpagesize())

// diskFloorSize is the scratch file's size: larger than the page cache's read-ahead, so that
// the pages written are scattered as a data file's are.
const diskFloorSize = 64 << 20

// diskFloor is the disk's part of a commit, measured alone: what a creation row's commits would
// cost if bbolt did nothing but write their pages and sync them. Each of its commits writes as
// many pages as the row's commits did on average, at random page offsets of a scratch file in
// the data file's directory (written with zeros first, page by page, as bbolt writes the data
// file's pages), then fdatasyncs, writes one page at the start (bbolt's meta page) and fdatasyncs
// again: bbolt's two steps, and nothing else (no B+tree, no sealing, no HTTP).
type diskFloor struct {
	f    *os.File
	page []byte
	rng  *rand.Rand
	// carry spreads a fractional mean over commits (17.6 pages: 17 then 18 in turn).
	carry float64
}

func newDiskFloor(b *testing.B, dir string) *diskFloor {
	f, err := os.CreateTemp(dir, "diskfloor-*")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = f.Close(); _ = os.Remove(f.Name()) })
	// Written a page at a time, as bbolt writes the data file's pages: the page cache then holds
	// the file page by page, as it holds the pages bbolt wrote (written in large writes, it
	// would be cached in large folios, where a page written costs more).
	zeros := make([]byte, diskPage)
	for off := int64(0); off < diskFloorSize; off += int64(len(zeros)) {
		if _, err := f.WriteAt(zeros, off); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}
	d := &diskFloor{f: f, page: make([]byte, diskPage), rng: rand.New(rand.NewPCG(1, 2))}
	for i := range d.page {
		d.page[i] = byte(d.rng.Uint32())
	}
	return d
}

// run makes commits of pages pages each (a mean) and returns how many and their time.
func (d *diskFloor) run(b *testing.B, pages float64, commits int) (int64, time.Duration) {
	slots := diskFloorSize / diskPage
	start := time.Now()
	for range commits {
		d.carry += pages
		n := int64(d.carry)
		d.carry -= float64(n)
		for range n {
			if _, err := d.f.WriteAt(d.page, (1+d.rng.Int64N(slots-1))*diskPage); err != nil {
				b.Fatal(err)
			}
		}
		if err := fdatasync(d.f); err != nil {
			b.Fatal(err)
		}
		if _, err := d.f.WriteAt(d.page, 0); err != nil {
			b.Fatal(err)
		}
		if err := fdatasync(d.f); err != nil {
			b.Fatal(err)
		}
	}
	return int64(commits), time.Since(start)
}
