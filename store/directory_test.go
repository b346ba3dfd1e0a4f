package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A data file whose directory does not exist (a mistyped --data) is refused with the command that
// creates the directory; nothing is created, not even the directory. A directory that exists
// takes a new data file.
func TestOpenRefusesAMissingDirectory(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	root := t.TempDir()
	for _, path := range []string{
		filepath.Join(root, "idvalt", "idvault.db"),
		filepath.Join(root, "a", "b", "idvault.db"),
	} {
		_, err := Open(Options{Path: path, MasterKey: mk})
		require.ErrorIs(t, err, ErrNoDirectory, path)
		require.ErrorContains(t, err, "mkdir -p -m 0700 "+filepath.Dir(path))
		require.ErrorContains(t, err, "store.path or --data")
	}
	entries, err := os.ReadDir(root)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing created")

	// A file where the directory should be is named as such.
	require.NoError(t, os.WriteFile(filepath.Join(root, "file"), nil, 0o600))
	_, err = Open(Options{Path: filepath.Join(root, "file", "idvault.db"), MasterKey: mk})
	require.ErrorContains(t, err, "is not a directory")

	s, err := Open(Options{Path: filepath.Join(root, "idvault.db"), MasterKey: mk})
	require.NoError(t, err)
	require.NoError(t, s.Close())
}
