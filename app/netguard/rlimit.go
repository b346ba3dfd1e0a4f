package netguard

import (
	"fmt"
	"syscall"
)

// RaiseFileLimit raises the soft limit on open files (RLIMIT_NOFILE) to the hard limit and
// returns the limit in force. (The Go runtime already does so at start on most systems; this
// makes it explicit and gives the figure for the log and for FitConns.)
func RaiseFileLimit() (uint64, error) {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0, fmt.Errorf("read the open-file limit: %w", err)
	}
	if lim.Cur < lim.Max {
		raised := lim
		raised.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err != nil {
			return uint64(lim.Cur), fmt.Errorf("raise the open-file limit to %d: %w", lim.Max, err)
		}
		lim = raised
	}
	return uint64(lim.Cur), nil
}

// FitConns is the connection cap that leaves room under an open-file limit for the rest of
// the process (data file, database pool, logs, the listener): a quarter of the limit, at most
// 128 files, is kept back. It returns maxConns when it fits.
func FitConns(maxConns int, fileLimit uint64) int {
	reserve := min(fileLimit/4, 128)
	room := fileLimit - reserve
	if room < 1 {
		room = 1
	}
	if uint64(maxConns) > room {
		return int(room)
	}
	return maxConns
}
