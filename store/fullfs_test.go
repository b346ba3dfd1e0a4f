package store

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/idvault/idvault/app/apptest/external"
)

// fullTmpfs mounts a 64 KiB tmpfs and fills it, so every write fails with ENOSPC. It needs root
// (skips otherwise) and a mount binary; the mount is removed when the test ends.
func fullTmpfs(t *testing.T) (dir string, free func()) {
	t.Helper()
	dir = external.Tmpfs(t, "64k")
	fill := external.FillTmpfs(t, dir)
	return dir, func() {
		if err := os.Remove(fill); err != nil {
			t.Fatal(err)
		}
	}
}

// A master key that cannot be written on a full disk leaves no empty key file behind: once
// space is freed, the next start creates the key instead of failing on "want 32 bytes".
func TestMasterKeyOnFullDisk(t *testing.T) {
	dir, free := fullTmpfs(t)
	keyPath := filepath.Join(dir, "master.key")
	dataPath := filepath.Join(dir, "idvault.db")
	if _, _, err := LoadOrCreateMasterKey(keyPath, dataPath); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("create master key on a full disk: err = %v, want no space left on device", err)
	}
	if _, err := os.Lstat(keyPath); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed master key write left %s behind (stat err %v)", keyPath, err)
	}
	free()
	if _, created, err := LoadOrCreateMasterKey(keyPath, dataPath); err != nil || !created {
		t.Fatalf("create master key once space is freed: created=%v err=%v", created, err)
	}
}

// A data file that cannot be created on a full disk leaves no partial file behind: once space
// is freed, the next start creates it instead of failing on "file size too small".
func TestNewDataFileOnFullDisk(t *testing.T) {
	dir, free := fullTmpfs(t)
	mk, err := NewMasterKey(make([]byte, MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "idvault.db")
	if _, err := Open(Options{Path: path, MasterKey: mk}); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("open a new data file on a full disk: err = %v, want no space left on device", err)
	}
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed data file creation left %s behind (stat err %v)", path, err)
	}
	free()
	s, err := Open(Options{Path: path, MasterKey: mk})
	if err != nil {
		t.Fatalf("open the data file once space is freed: %v", err)
	}
	s.Close()
}

// A backup written to a full disk fails with an error that is recognisably "no space left on
// device" (errors.Is), so the admin API can tell the operator why.
func TestBackupToFullDiskKeepsTheCause(t *testing.T) {
	mk, err := NewMasterKey(make([]byte, MasterKeySize))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(Options{Path: filepath.Join(t.TempDir(), "idvault.db"), MasterKey: mk})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	f, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	defer f.Close()
	if _, err := s.Backup(f); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("backup to a full disk: err = %v, want one that is no space left on device", err)
	}
}
