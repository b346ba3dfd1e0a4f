package store

import (
	"errors"
	"fmt"
	"os"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterr "go.etcd.io/bbolt/errors"
)

// checkDataFile reports an existing path that is no data file: a directory, or a file bbolt
// does not read (not a bbolt file, another bbolt version, a damaged header). It opens the file
// read-only and writes nothing; an empty file (bbolt makes it a new data file), a file another
// process holds, or one it cannot read pass, for Open to judge.
func checkDataFile(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return nil
	}
	if st.IsDir() {
		return fmt.Errorf("store: the data file %s is a directory: give the file's path (store.path, --data)", path)
	}
	if st.Size() == 0 {
		return nil
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: 50 * time.Millisecond})
	if err == nil {
		return db.Close()
	}
	if errors.Is(err, bolterr.ErrInvalid) || errors.Is(err, bolterr.ErrVersionMismatch) || errors.Is(err, bolterr.ErrChecksum) {
		return fmt.Errorf("store: %s is not an idvault data file (%v): check store.path or --data", path, err)
	}
	return nil
}
