package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterr "go.etcd.io/bbolt/errors"
)

// CheckDataFile reports an existing path that is no data file: a directory, a device or a pipe
// (`--data /dev/zero`), or a file bbolt
// does not read (not a bbolt file, such as a config file given to --data by mistake, another
// bbolt version, a damaged header). It opens the file read-only and writes nothing; a missing
// or empty file (bbolt makes it a new data file), a file another process holds, or one it
// cannot read pass, for Open to judge. Commands call it before asking for the master key, so
// such a path is named as what it is rather than sending the operator after a key file.
func CheckDataFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if err := checkKind(path, st); err != nil {
		return err
	}
	if st.Size() == 0 {
		return nil
	}
	db, err := openGuarded(path, &bolt.Options{ReadOnly: true, Timeout: 50 * time.Millisecond})
	if errors.Is(err, ErrDamaged) {
		return err
	}
	if err == nil {
		return db.Close()
	}
	// Held by another process, or not readable by this one: the file may be a good data file.
	if errors.Is(err, bolterr.ErrTimeout) || errors.Is(err, fs.ErrPermission) {
		return nil
	}
	// Anything else bbolt refuses is no data file: ErrInvalid, ErrVersionMismatch, ErrChecksum,
	// and "file size too small" (an unwrapped error), which a small text file such as a config
	// file gets.
	return fmt.Errorf("store: %s is not an idvault data file (%v): check store.path or --data", path, err)
}

// checkKind refuses a data file path that is not a regular file (a symlink to one is).
func checkKind(path string, st fs.FileInfo) error {
	if st.IsDir() {
		return fmt.Errorf("store: the data file %s is a directory: give the file's path (store.path, --data)", path)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("store: the data file %s is not a regular file (%s): give the file's path (store.path, --data)", path, fileKind(st.Mode()))
	}
	return nil
}

// fileKind names what a path that is not a regular file is.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a file"
}
