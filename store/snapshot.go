package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Snapshot is a verified copy of the data file in a temporary file next to it, open for
// reading from the start. Close removes the file.
type Snapshot struct {
	*os.File
	// Size is the copy's length in bytes.
	Size int64
}

// Close closes and removes the temporary file.
func (s *Snapshot) Close() error {
	err := s.File.Close()
	if rerr := os.Remove(s.File.Name()); err == nil && !errors.Is(rerr, os.ErrNotExist) {
		err = rerr
	}
	return err
}

// snapshotPattern names snapshot files (os.CreateTemp pattern) in the data file's directory.
const snapshotPattern = ".idvault-snapshot-*"

// removeStaleSnapshots deletes snapshots left by a process that died while streaming one. It runs
// once the data file's lock is held, so no live process is using them.
func removeStaleSnapshots(dir string) {
	stale, _ := filepath.Glob(filepath.Join(dir, snapshotPattern))
	for _, f := range stale {
		_ = os.Remove(f)
	}
}

// Snapshot copies the data file to a temporary file in its directory (a local file copy is all
// the read transaction lasts, so writers wait for nothing slower), fsyncs it, checks it with
// VerifyFile, and returns it open at offset 0. Streaming the snapshot to a slow client then
// holds no transaction at all. The caller must Close it.
func (s *Store) Snapshot() (*Snapshot, error) {
	f, err := os.CreateTemp(filepath.Dir(s.Path()), snapshotPattern)
	if err != nil {
		return nil, fmt.Errorf("store: snapshot: %w", err)
	}
	snap := &Snapshot{File: f}
	fail := func(err error) (*Snapshot, error) {
		_ = snap.Close()
		return nil, fmt.Errorf("store: snapshot: %w", err)
	}
	n, err := s.Backup(f)
	if errors.Is(err, ErrDamaged) {
		_ = snap.Close()
		return nil, err // it names the data file and what to do, as every ErrDamaged
	}
	if err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := VerifyFile(f.Name()); err != nil {
		var d *damagedError
		if errors.As(err, &d) {
			// The copy is the data file's pages: name the data file, not the temporary copy.
			_ = snap.Close()
			return nil, s.damage.note(damaged(s.Path(), "its copy fails the check: "+d.detail))
		}
		return fail(err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != n {
		return fail(fmt.Errorf("copy is %d bytes, wrote %d (%v)", fi.Size(), n, err))
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fail(err)
	}
	snap.Size = n
	return snap, nil
}
