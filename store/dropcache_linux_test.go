package store

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"
)

// dropCache drops what the page cache holds of the closed file at path, as if it had not been
// read since the machine started.
func dropCache(t testing.TB, path string) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Fatal(err)
	}
}
