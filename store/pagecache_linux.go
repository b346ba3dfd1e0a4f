package store

import (
	"os"

	"golang.org/x/sys/unix"
)

// Keeping the data file's pages in the page cache one by one.
//
// Linux caches a file in folios: 4 KiB pages, or, on a file system that supports it (XFS, and
// ext4 on recent kernels), runs of pages (large folios). A file read with readahead or written
// in large writes is cached in large folios, and a 4 KiB write into one costs the whole folio:
// BenchmarkScatteredPages times a commit's pattern (pages written at random places of a file,
// fdatasync, one page, fdatasync) into a file read with readahead and into one cached page by
// page, and the first costs several times the CPU of the second. bbolt writes page by page at
// scattered places, so the data file is kept in 4 KiB folios: Open reads it into the cache with cacheByPage before anything maps it, and
// the zeros written ahead of the data go 4 KiB at a time (fileAhead). What maps it afterwards
// faults page by page: bbolt's mapping is MADV_RANDOM, and the page check's walk in tree order
// is not read as sequential.

// cachesByPage says that cacheByPage does something here.
const cachesByPage = true

// cacheByPage puts the file at path in the page cache in 4 KiB folios: it drops what the cache
// holds of it (FADV_DONTNEED, after an fdatasync: clean pages no process maps), then reads its
// data back, up to its size when opened and skipping holes, in 1 MiB reads with readahead off
// (FADV_RANDOM), which fill the cache page by page at the speed of a sequential read. It is advice only: anything but a
// regular file is left alone (opened without blocking, should a pipe have taken the file's
// place), so is a file a running server holds, an error leaves the cache as it was, and the open
// goes on.
func cacheByPage(path string) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return
	}
	fd := int(f.Fd())
	// A file another process holds for writing (bbolt's exclusive flock: a running server) is
	// left as it is: the open fails with ErrLocked anyway, and the pages are that process's.
	if unix.Flock(fd, unix.LOCK_SH|unix.LOCK_NB) != nil {
		return
	}
	defer unix.Flock(fd, unix.LOCK_UN)
	// FADV_DONTNEED drops clean pages only: a file copied in and not yet written out (a backup
	// restored with cp) is first.
	if unix.Fdatasync(fd) != nil || unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED) != nil ||
		unix.Fadvise(fd, 0, 0, unix.FADV_RANDOM) != nil {
		return
	}
	buf := make([]byte, 1<<20)
	for off := int64(0); off < st.Size(); {
		// Holes are skipped (bbolt grows its file with a truncate): they hold nothing to cache,
		// and a sparse file of any size is read in the time of its data.
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err != nil || data >= st.Size() { // ENXIO: no data past off
			return
		}
		n, err := f.ReadAt(buf[:min(int64(len(buf)), st.Size()-data)], data)
		if n == 0 || err != nil {
			return
		}
		off = data + int64(n)
	}
}
