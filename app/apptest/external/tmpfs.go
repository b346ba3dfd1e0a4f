package external

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// Tmpfs mounts a tmpfs of size (mount's -o size=, such as 64k) on a new directory, so that
// writing past it fails with ENOSPC as on a real full disk. It needs root and a mount binary
// (the test skips otherwise); the mount is removed when the test ends.
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	Short(t, "mount (a tmpfs)")
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// Remount changes the options of the tmpfs at dir (remount,opts: size=1m, ro, rw).
func Remount(t testing.TB, dir, opts string) {
	t.Helper()
	if out, err := exec.Command("mount", "-o", "remount,"+opts, dir).CombinedOutput(); err != nil {
		t.Fatalf("remount %s %s: %v: %s", dir, opts, err, out)
	}
}

// FillTmpfs fills the tmpfs at dir with a file named fill, so that every later write fails
// with ENOSPC, and returns the file's path (removing it frees the space). A file system not
// full after 64 MiB fails the test.
func FillTmpfs(t testing.TB, dir string) string {
	t.Helper()
	fill := filepath.Join(dir, "fill")
	f, err := os.Create(fill)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for range 1024 {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatal(err)
			}
			return fill
		}
	}
	t.Fatalf("%s is not full after 64 MiB", dir)
	return ""
}
