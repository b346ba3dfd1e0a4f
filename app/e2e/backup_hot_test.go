package e2e_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// Through a running server: a directory works the same way, and nothing is overwritten.
func TestHotBackupToADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	apptest.Start(t, dir, env)
	backups := filepath.Join(dir, "backups")
	require.NoError(t, os.Mkdir(backups, 0o700))
	out, errOut, code := apptest.RunCLI(t, dir, env, "backup", "--out", backups)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "backup written to "+backups+string(os.PathSeparator)+"idvault-")
	entries, err := os.ReadDir(backups)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.NoError(t, os.WriteFile(filepath.Join(backups, "x.db"), []byte("precious"), 0o600))
	_, errOut, code = apptest.RunCLI(t, dir, env, "backup", "--out", filepath.Join(backups, "x.db"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "exists: use --force")
}
