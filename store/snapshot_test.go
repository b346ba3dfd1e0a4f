package store

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A snapshot is a verified copy that disappears when closed; snapshots left by a crashed
// process are removed at the next open.
func TestSnapshotIsVerifiedAndCleanedUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mk, err := NewMasterKey(make([]byte, MasterKeySize))
	require.NoError(t, err)
	path := filepath.Join(dir, "idvault.db")
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	require.NoError(t, s.CreateApp(App{ID: make([]byte, 32), Name: "a", Secret: make([]byte, 64)}))

	snap, err := s.Snapshot()
	require.NoError(t, err)
	raw, err := io.ReadAll(snap)
	require.NoError(t, err)
	require.EqualValues(t, snap.Size, len(raw))
	copyPath := filepath.Join(t.TempDir(), "copy.db")
	require.NoError(t, os.WriteFile(copyPath, raw, 0o600))
	require.NoError(t, VerifyFile(copyPath))
	require.NoError(t, snap.Close())
	_, err = os.Stat(snap.Name())
	require.ErrorIs(t, err, os.ErrNotExist, "closing removes the snapshot")

	leftover, err := s.Snapshot() // never closed: the process "dies"
	require.NoError(t, err)
	require.NoError(t, leftover.File.Close())
	require.NoError(t, s.Close())
	s, err = Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s.Close()
	_, err = os.Stat(leftover.Name())
	require.ErrorIs(t, err, os.ErrNotExist, "a stale snapshot is removed at open")
}
