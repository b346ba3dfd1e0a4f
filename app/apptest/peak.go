package apptest

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ProcStatusKiB reads a field of /proc/PID/status (VmRSS, VmHWM) in KiB, if the process is
// still there (Linux only; false elsewhere).
func ProcStatusKiB(pid int, field string) (float64, bool) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// RunPeak starts cmd, waits for it and returns its wall time in seconds and its peak RSS in
// KiB: VmHWM, read every 20 ms while it runs (the rusage of a child started by vfork counts the
// parent's memory from before the exec, so it cannot tell a small client). The error is
// Start's or Wait's.
func RunPeak(cmd *exec.Cmd) (secs, peakKiB float64, err error) {
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	done := make(chan struct{})
	hwm := make(chan float64, 1)
	go func() {
		peak := 0.0
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		for {
			if v, ok := ProcStatusKiB(cmd.Process.Pid, "VmHWM"); ok {
				peak = max(peak, v)
			}
			select {
			case <-done:
				hwm <- peak
				return
			case <-t.C:
			}
		}
	}()
	err = cmd.Wait()
	secs = time.Since(start).Seconds()
	close(done)
	return secs, <-hwm, err
}
