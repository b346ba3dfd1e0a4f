package exitclient

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// lockOutput takes an exclusive lock on the output directory dir for the whole run, so that a
// second run on the same directory is refused (a *ConfigError) instead of removing the part
// files of the first as left by a killed run and renaming each other's half-written files over
// the final names. The lock is flock(2) on the directory itself: no file is added to the
// output, and the kernel drops the lock when the process ends, however it ends.
func lockOutput(dir, out string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("decrypt: %q: %w", out, bareErr(err))
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &ConfigError{Msg: fmt.Sprintf("--out %q is in use by another exit decrypt: wait for it to end, or choose another output directory", out)}
		}
		return nil, fmt.Errorf("decrypt: lock %q: %w", out, err)
	}
	return func() { f.Close() }, nil
}
