package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckDirectory refuses a file path whose directory does not exist (ErrNoDirectory) or is not a
// directory. The store never creates a missing directory for its files: a mistyped --data or
// store.path would otherwise start an empty store with a new master key in a directory nobody
// meant, and every client would see its users gone. what names the file ("data file", "master
// key") and key the settings that give its path; the error names the directory and the
// command that creates it. Any other error (a directory this user cannot search) is left to the
// open that follows, which names it.
func CheckDirectory(file, what, key string) error {
	dir := filepath.Dir(file)
	st, err := os.Stat(dir)
	abs, aerr := filepath.Abs(dir)
	if aerr != nil {
		abs = dir
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s, the directory of the %s %s: check %s, or create it with: mkdir -p -m 0700 %s",
			ErrNoDirectory, abs, what, file, key, abs)
	case err == nil && !st.IsDir():
		return fmt.Errorf("store: %s, the directory of the %s %s, is not a directory: check %s", abs, what, file, key)
	}
	return nil
}
