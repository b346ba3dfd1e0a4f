package loadgen_test

import (
	"os"
	"syscall"
)

// fdatasync is bbolt's sync on Linux.
func fdatasync(f *os.File) error { return syscall.Fdatasync(int(f.Fd())) }
