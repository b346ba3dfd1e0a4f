//go:build unix

package apptest

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system) the test process used so far.
func ProcessCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
