package store

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// largeFolioPages counts the pages of the file at path that the page cache holds in large
// folios (compound pages, read from /proc/self/pagemap and /proc/kpageflags, which need root),
// mapping it page by page (MADV_RANDOM, so that the mapping itself reads nothing ahead). The
// test is skipped where those files cannot be read.
func largeFolioPages(t *testing.T, path string) int {
	t.Helper()
	pagemap, err := os.Open("/proc/self/pagemap")
	if err != nil {
		t.Skip("no /proc/self/pagemap:", err)
	}
	defer pagemap.Close()
	kflags, err := os.Open("/proc/kpageflags")
	if err != nil {
		t.Skip("no /proc/kpageflags (root only):", err)
	}
	defer kflags.Close()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	data, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer syscall.Munmap(data)
	require.NoError(t, unix.Madvise(data, unix.MADV_RANDOM))
	ps := os.Getpagesize()
	base := uintptr(unsafe.Pointer(unsafe.SliceData(data)))
	large := 0
	var word [8]byte
	var sum byte
	for off := 0; off < len(data); off += ps {
		sum += data[off] // map the cached page
		_, err := pagemap.ReadAt(word[:], int64((base+uintptr(off))/uintptr(ps))*8)
		require.NoError(t, err)
		e := binary.LittleEndian.Uint64(word[:])
		pfn := e & (1<<55 - 1)
		if e>>63 == 0 || pfn == 0 {
			t.Skip("page frame numbers hidden (not root)")
		}
		_, err = kflags.ReadAt(word[:], int64(pfn)*8)
		require.NoError(t, err)
		if binary.LittleEndian.Uint64(word[:])&(1<<15|1<<16) != 0 { // KPF_COMPOUND_HEAD, _TAIL
			large++
		}
	}
	touched = sum
	return large
}

// touched keeps the loads of largeFolioPages.
var touched byte

// writeInLargeWrites makes a file of size bytes in 1 MiB writes, which a file system caching
// in large folios caches so; the test is skipped where it does not (nothing to keep apart).
func writeInLargeWrites(t *testing.T, size int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "data")
	require.NoError(t, os.WriteFile(path, make([]byte, size), 0o600))
	if largeFolioPages(t, path) == 0 {
		t.Skip("this file system caches files page by page")
	}
	return path
}

func TestCacheByPageLeavesNoLargeFolio(t *testing.T) {
	path := writeInLargeWrites(t, 8<<20)
	cacheByPage(path)
	require.Zero(t, largeFolioPages(t, path), "pages still cached in large folios after cacheByPage")
}

func TestCacheByPageReadsDataNotHoles(t *testing.T) {
	const size, data = 1 << 30, 1 << 20
	path := filepath.Join(t.TempDir(), "sparse")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	ones := bytes.Repeat([]byte{1}, data)
	_, err = f.WriteAt(ones, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(ones, size-data) // a 1 GiB file: its two ends hold data, the rest a hole
	require.NoError(t, err)
	require.NoError(t, f.Sync())
	dropCache(t, path)
	cacheByPage(path)
	m, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer syscall.Munmap(m)
	ps := os.Getpagesize()
	resident := make([]byte, size/ps)
	_, _, errno := syscall.Syscall(syscall.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(m))),
		uintptr(len(m)), uintptr(unsafe.Pointer(unsafe.SliceData(resident))))
	require.Zero(t, errno, "mincore")
	count := func(from, to int) (n int) {
		for _, r := range resident[from/ps : to/ps] {
			n += int(r & 1)
		}
		return n
	}
	require.Equal(t, data/ps, count(0, data), "the data at the start is not cached")
	require.Equal(t, data/ps, count(size-data, size), "the data at the end is not cached")
	require.Zero(t, count(data, size-data), "the hole was read into the cache")
}

func TestCacheByPageLeavesAHeldFileAlone(t *testing.T) {
	path := writeInLargeWrites(t, 8<<20)
	before := largeFolioPages(t, path)
	held, err := os.Open(path) // a server holding the file, as bbolt does: an exclusive flock
	require.NoError(t, err)
	defer held.Close()
	require.NoError(t, unix.Flock(int(held.Fd()), unix.LOCK_EX|unix.LOCK_NB))
	cacheByPage(path)
	require.Equal(t, before, largeFolioPages(t, path), "cacheByPage dropped a held file's pages")
}

func TestNewStoreIsCachedByPage(t *testing.T) {
	writeInLargeWrites(t, 8<<20) // skips where large folios never happen
	s, path := openTemp(t, newKey(t))
	require.NoError(t, s.CreateApp(testApp(7))) // a commit: a meta page written
	require.NoError(t, s.Close())
	require.Zero(t, largeFolioPages(t, path), "a new data file's first pages cached in a large folio")
}

func TestZerosAheadAreCachedByPage(t *testing.T) {
	writeInLargeWrites(t, 8<<20) // skips where large folios never happen
	path := filepath.Join(t.TempDir(), "ahead")
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, writeZeros(f, 0, 8<<20))
	require.Zero(t, largeFolioPages(t, path), "zeros written ahead cached in large folios")
}

func TestCacheByPageLeavesAPipeAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	require.NoError(t, unix.Mkfifo(path, 0o600))
	done := make(chan struct{})
	go func() { cacheByPage(path); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cacheByPage blocked on a pipe")
	}
}
