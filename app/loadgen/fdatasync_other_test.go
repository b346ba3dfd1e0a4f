//go:build !linux

package loadgen_test

import "os"

// fdatasync is bbolt's sync elsewhere: fsync.
func fdatasync(f *os.File) error { return f.Sync() }
