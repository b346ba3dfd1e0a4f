package gen

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/idvault/idvault/exit/dump"
)

// FileMode is the mode of every file Generate writes: a dump holds private keys (2_data.sql),
// the app secret (app.json), private identities (identities.jsonl) and digests of clear data
// (manifest.jsonl, SHA256SUMS). Directories it creates get DirMode.
const (
	FileMode fs.FileMode = 0o600
	DirMode  fs.FileMode = 0o700
)

// outputNames are the names Generate creates in its directory; none may exist beforehand.
func outputNames(writeKeys bool) []string {
	names := []string{dump.SchemaFile, dump.DataFile, dump.IndexesFile, dump.AppFile, dump.IdentitiesFile, dump.ManifestFile, dump.SumsFile, dump.DataDir}
	if writeKeys {
		names = append(names, dump.KeysFile)
	}
	return names
}

// createNew creates path for reading and writing with FileMode. It never opens an existing
// file, and a symbolic link at path is refused, never followed (O_CREAT|O_EXCL|O_NOFOLLOW).
func createNew(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, FileMode)
	if err != nil {
		return nil, existsError(path, err)
	}
	return f, nil
}

func existsError(path string, err error) error {
	if errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ELOOP) {
		return fmt.Errorf("dump: %s already exists (a file or a link): gen-dump only creates new files, never writes through one", path)
	}
	return fmt.Errorf("dump: %w", err)
}

// writeNew writes data to a new file at path (see createNew), and syncs it when sync is set.
// The many small ciphertexts under data/ are not synced one by one: a failed run removes
// data/ whole, and a sync each would make the generator wait on the disk 300,000 times.
func writeNew(path string, data []byte, sync bool) error {
	f, err := createNew(path)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(path)
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}

// publish gives the complete file tmp (in the generator's private directory, on the same file
// system) its final name with a hard link, which fails when anything exists at final, a link
// included: a reader never sees a partial file and nothing is written through a planted link.
// Where hard links are not supported it copies tmp to a file created new.
func publish(tmp, final string) error {
	err := os.Link(tmp, final)
	switch {
	case err == nil:
		return os.Remove(tmp)
	case errors.Is(err, fs.ErrExist):
		return existsError(final, err)
	}
	src, err := os.Open(tmp)
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	defer src.Close()
	dst, err := createNew(final)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, src)
	if err == nil {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(final)
		return fmt.Errorf("dump: %s: %w", filepath.Base(final), err)
	}
	return os.Remove(tmp)
}
