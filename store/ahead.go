package store

import (
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// fileAhead keeps the data file's blocks written, with zeros, a little beyond the pages in use,
// so that a commit writing pages past the old end of the data writes into blocks the file system
// already holds.
//
// bbolt grows its file with a truncate, which leaves a hole: the first write into a hole makes
// the file system allocate a block and journal it, and the commit's fdatasync then waits for that
// journal commit too: BenchmarkCommitPattern (what a commit writes, without bbolt: 12 new pages,
// fdatasync, the meta page, fdatasync) compares commits into a hole with commits into written
// blocks, on the file system of the test's temporary directory. An identity store grows with
// every new identity, so most commits write such pages.
//
// keep runs inside the write transaction of a group commit, before bbolt allocates that
// commit's pages: the writer lock is held, so no other commit writes to the file meanwhile, and
// no page at or past tx.Size() (the pages in use) holds anything yet. The zeros go there only.
// The room kept is a quarter of the data, between aheadMin and aheadMax, topped up when less
// than half of it is left: a lone new store writes 256 KiB, a large one 8 MiB at a time, in
// 4 KiB writes (slower than large writes, which would leave the pages cached in large folios:
// see pagecache_linux.go; once per 4 to 8 MiB of new data). The data file
// is therefore up to aheadMax larger than its pages in use (bbolt's own growth already rounds it
// up by up to 16 MiB, as a hole); backups copy the pages in use only.
//
// A failed extension (a full disk) is given back, the file truncated to its size before it, so
// it never takes the last free space bbolt's own commits need, and is not tried again for
// aheadRetry. The commit goes on either way: bbolt then grows the file itself, as it would
// without this.
type fileAhead struct {
	// f is the data file, opened once and checked to be the file bbolt opened: the zeros never
	// follow a path that may have changed since.
	f *os.File
	// upTo is how far the file is known to hold written blocks (at open, its first hole);
	// failedAt is the last failed extension.
	upTo     int64
	failedAt time.Time
}

// openAhead opens the data file at path for fileAhead, or returns nil (bbolt then grows the file
// as it does alone) when it cannot be opened for writing or is not the file opened (the file
// bbolt opened, as Open found it).
func openAhead(path string, opened os.FileInfo) *fileAhead {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	if st, err := f.Stat(); err != nil || !os.SameFile(st, opened) {
		f.Close()
		return nil
	}
	return &fileAhead{f: f, upTo: firstHole(f)}
}

// firstHole is the offset of the first hole in f (its size when it has none; 0 when the system
// cannot say): the room an earlier run wrote is not written again at every start.
func firstHole(f *os.File) int64 {
	off, err := unix.Seek(int(f.Fd()), 0, unix.SEEK_HOLE)
	if err != nil {
		return 0
	}
	return off
}

// close closes the file (a nil fileAhead does nothing).
func (a *fileAhead) close() {
	if a != nil {
		a.f.Close()
	}
}

const (
	aheadMin   = 256 << 10
	aheadMax   = 8 << 20
	aheadRetry = 10 * time.Second
	// zeroChunk is the size of each write of zeros: one page, so that the page cache keeps the
	// pages written ahead one by one, as bbolt writes them (see pagecache_linux.go).
	zeroChunk = 4 << 10
)

// aheadFor is the room kept past used bytes of pages in use: a quarter of them, within
// [aheadMin, aheadMax], in whole 64 KiB.
func aheadFor(used int64) int64 {
	return min(max(used/4, aheadMin), aheadMax) &^ (64<<10 - 1)
}

// keep tops the written room up when less than half of it is left. It must run inside a write
// transaction; it never fails the transaction.
func (a *fileAhead) keep(tx *bolt.Tx) {
	used := tx.Size()
	want := aheadFor(used)
	if a.upTo >= used+want/2 {
		return
	}
	if !a.failedAt.IsZero() && time.Since(a.failedAt) < aheadRetry {
		return
	}
	to := used + want
	if err := writeZeros(a.f, max(a.upTo, used), to); err != nil {
		a.failedAt = time.Now()
		return
	}
	a.upTo, a.failedAt = to, time.Time{}
}

// writeZeros writes zeros over [from, to) of f and syncs it. On an error the file is truncated
// back to its size before the call.
func writeZeros(f *os.File, from, to int64) (err error) {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	defer func() {
		if err != nil && to > st.Size() {
			_ = f.Truncate(st.Size())
		}
	}()
	zeros := make([]byte, min(to-from, zeroChunk))
	for off := from; off < to; off += int64(len(zeros)) {
		n := min(int64(len(zeros)), to-off)
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return fmt.Errorf("store: extend %s: %w", f.Name(), err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("store: extend %s: %w", f.Name(), err)
	}
	return nil
}
