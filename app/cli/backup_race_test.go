package cli

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/store"
)

// Two backups into one directory in the same second (a timer and an operator) aim at the same
// dated name; each checked that the name was free before copying. The one that finishes second
// must not replace the other's copy without --force: it fails, saying so, and the first copy
// stays whole. With --force it replaces it.
func TestBackupNeverReplacesACopyThatLandedMeanwhile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	mk, _, err := store.LoadOrCreateMasterKey(filepath.Join(dir, "master.key"), filepath.Join(dir, "idvault.db"))
	require.NoError(t, err)
	st, err := store.Open(store.Options{Path: filepath.Join(dir, "idvault.db"), MasterKey: mk})
	require.NoError(t, err)
	defer st.Close()
	out := filepath.Join(dir, "idvault-2026-01-31T120000Z.db")
	open := func() (*store.Store, error) { return nil, store.ErrLocked }
	// The other backup lands while this one copies.
	remote := func(f io.Writer) error {
		if err := os.WriteFile(out, []byte("the other backup"), 0o600); err != nil {
			return err
		}
		_, err := st.Backup(f)
		return err
	}

	_, err = backup(context.Background(), out, false, open, remote)
	require.Error(t, err)
	require.Contains(t, err.Error(), out+" exists: use --force")
	raw, rerr := os.ReadFile(out)
	require.NoError(t, rerr)
	require.Equal(t, "the other backup", string(raw), "the copy that landed first is kept")
	left, _ := filepath.Glob(filepath.Join(dir, ".idvault-backup-*"))
	require.Empty(t, left, "no temporary file left")

	n, err := backup(context.Background(), out, true, open, remote)
	require.NoError(t, err)
	require.NoError(t, store.VerifyFile(out), "--force replaces it with the new copy")
	fi, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, n, fi.Size())
}

// A server holds the data file but its admin token file is gone: the error says so and names
// the token file, rather than "open: no such file or directory" after the backup's own path,
// which reads as if --out were missing.
func TestBackupThroughServerNamesAMissingTokenFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var c config.Config
	c.Store.Path = filepath.Join(dir, "idvault.db")
	out := filepath.Join(dir, "b.db")
	_, err := backup(context.Background(), out, false,
		func() (*store.Store, error) { return nil, store.ErrLocked },
		func(io.Writer) error {
			_, err := adminClient(c)
			return err
		})
	require.Error(t, err)
	require.Contains(t, err.Error(), "admin token is not readable")
	require.Contains(t, err.Error(), filepath.Join(dir, "admin.token"))
}
