package apptest

import (
	"testing"

	"github.com/idvault/idvault/app/apptest/external"
)

// Tmpfs mounts a tmpfs of size on a new directory, removed when the test ends (external.Tmpfs,
// which the store's tests share: they cannot import apptest).
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	return external.Tmpfs(t, size)
}

// Remount changes the options of the tmpfs at dir (external.Remount).
func Remount(t testing.TB, dir, opts string) {
	t.Helper()
	external.Remount(t, dir, opts)
}

// FillTmpfs fills the tmpfs at dir, so that every later write fails with ENOSPC
// (external.FillTmpfs).
func FillTmpfs(t testing.TB, dir string) {
	t.Helper()
	external.FillTmpfs(t, dir)
}
