package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/store"
)

// Ctrl-C during a backup (of a large data file, through the server or not) stops the copy:
// nothing is written at --out, and no partial temporary copy is left beside it.
func TestBackupStopsWhenInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	keyFile, dataFile := filepath.Join(dir, "master.key"), filepath.Join(dir, "idvault.db")
	mk, _, err := store.LoadOrCreateMasterKey(keyFile, dataFile)
	require.NoError(t, err)
	// The server's store, for the backup through it; the direct one opens its file itself.
	served, err := store.Open(store.Options{Path: filepath.Join(dir, "served.db"), MasterKey: mk})
	require.NoError(t, err)
	defer served.Close()
	backups := filepath.Join(dir, "backups")
	require.NoError(t, os.Mkdir(backups, 0o700))
	out := filepath.Join(backups, "b.db")

	for _, name := range []string{"direct", "through the server"} {
		ctx, cancel := context.WithCancel(context.Background())
		// The interrupt arrives once the copy has started.
		open := func() (*store.Store, error) {
			cancel()
			return store.Open(store.Options{Path: dataFile, MasterKey: mk})
		}
		remote := func(w io.Writer) error {
			if _, err := w.Write(make([]byte, 4096)); err != nil {
				return err
			}
			cancel()
			_, err := served.Backup(w)
			return err
		}
		if name == "through the server" {
			open = func() (*store.Store, error) { return nil, store.ErrLocked }
		}
		_, err := backup(ctx, out, false, open, remote)
		cancel()
		require.ErrorIs(t, err, context.Canceled, name)
		_, serr := os.Stat(out)
		require.ErrorIs(t, serr, os.ErrNotExist, "%s: nothing written at --out", name)
		left, _ := os.ReadDir(backups)
		require.Empty(t, left, "%s: no temporary copy left", name)
	}
}
