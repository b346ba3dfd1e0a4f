// Package smallfile reads the small files idvault reads whole (the configuration, the master
// key, the admin token, the address file), refusing one too large at once: standard library
// only, so that any package may use it.
package smallfile

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// Read reads the file at path whole, up to limit bytes: the files idvault reads whole
// (the configuration, the master key, the admin token, the address file) are small, and a
// path given by mistake to something endless or huge (/dev/zero, a log file) fails at once
// with ErrTooLarge instead of taking the machine's memory. A pipe (--config /dev/stdin) is
// read like a file.
func Read(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, &os.PathError{Op: "read", Path: path, Err: err}
	}
	if int64(len(raw)) > limit {
		return nil, &os.PathError{Op: "read", Path: path, Err: fmt.Errorf("%w (over %d bytes)", ErrTooLarge, limit)}
	}
	return raw, nil
}

// ErrTooLarge is a file Read refused for its size.
var ErrTooLarge = errors.New("file too large for what it should hold")
