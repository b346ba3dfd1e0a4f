package outfiles

import (
	"errors"
	"os"
	"syscall"
)

// ErrInUse is the error of Lock on a directory another run holds.
var ErrInUse = errors.New("the output directory is in use by another run")

// Lock takes an exclusive lock on the output directory dir for the whole run, so that a second
// run on the same directory is refused (ErrInUse) instead of removing the part files of the
// first as left by a killed run and renaming each other's half-written files over the final
// names. The lock is flock(2) on the directory itself: no file is added to the output, and the
// kernel drops the lock when the process ends, however it ends. A directory that does not open
// is the *fs.PathError of os.Open.
func Lock(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrInUse
		}
		return nil, err
	}
	return func() { f.Close() }, nil
}
