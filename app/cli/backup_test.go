package cli_test

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
)

func TestBackupToADirectoryWritesADatedFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	_, _, code := clitest.Run(t, dir, "app", "create", "--name", "kept")
	require.Equal(t, 0, code)
	backups := filepath.Join(dir, "backups")
	require.NoError(t, os.Mkdir(backups, 0o700))

	out, errOut, code := clitest.Run(t, dir, "backup", "--out", backups)
	require.Equal(t, 0, code, errOut)
	entries, err := os.ReadDir(backups)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	name := entries[0].Name()
	require.Regexp(t, regexp.MustCompile(`^idvault-\d{4}-\d\d-\d\dT\d{6}Z\.db$`), name)
	require.Contains(t, out, filepath.Join(backups, name))
	st, err := os.Stat(filepath.Join(backups, name))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	// The master key stays where it was (a backup elsewhere needs it named).
	list, errOut, code := clitest.RunEnv(t, []string{"IDVAULT_STORE__KEY_FILE=" + filepath.Join(dir, "master.key")},
		"app", "list", "--data", filepath.Join(backups, name))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, list, "kept")
}

func TestBackupRefusesToOverwriteWithoutForce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	target := filepath.Join(dir, "backup.db")
	require.NoError(t, os.WriteFile(target, []byte("precious"), 0o600))

	_, errOut, code := clitest.Run(t, dir, "backup", "--out", target)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, target+" exists: use --force")
	raw, err := os.ReadFile(target)
	require.NoError(t, err)
	require.Equal(t, "precious", string(raw), "not overwritten")

	_, errOut, code = clitest.Run(t, dir, "backup", "--out", target, "--force")
	require.Equal(t, 0, code, errOut)
	list, _, code := clitest.Run(t, dir, "app", "list", "--data", target)
	require.Equal(t, 0, code, "replaced by a working copy")
	require.Contains(t, list, "ID")
}

// Errors name the path the user gave, never a temporary file.
func TestBackupErrorsNameTheUsersPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	missing := filepath.Join(dir, "no-such-dir", "b.db")
	_, errOut, code := clitest.Run(t, dir, "backup", "--out", missing)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, missing)
	require.Contains(t, errOut, "does not exist")
	require.NotContains(t, errOut, ".idvault-backup-")

	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o500))
		_, errOut, code = clitest.Run(t, dir, "backup", "--out", filepath.Join(ro, "b.db"))
		require.Equal(t, 1, code)
		require.Contains(t, errOut, filepath.Join(ro, "b.db"))
		require.Contains(t, errOut, "permission denied")
		require.NotContains(t, errOut, ".idvault-backup-")
	}
}

// --force never replaces a file idvault runs on, under any name: the copy would take the place
// of the live data file under its server, or of the only master key.
func TestBackupNeverReplacesItsOwnFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	_, _, code := clitest.Run(t, dir, "app", "create", "--name", "kept")
	require.Equal(t, 0, code)
	require.NoError(t, os.Symlink(filepath.Join(dir, "idvault.db"), filepath.Join(dir, "link.db")))
	for _, name := range []string{"idvault.db", "master.key", "admin.token", "link.db"} {
		target := filepath.Join(dir, name)
		before, err := os.ReadFile(target)
		require.NoError(t, err)
		_, errOut, code := clitest.Run(t, dir, "backup", "--out", target, "--force")
		require.Equal(t, 1, code, name)
		require.Contains(t, errOut, target+" is a file idvault runs on", name)
		after, err := os.ReadFile(target)
		require.NoError(t, err)
		require.Equal(t, before, after, "%s untouched", name)
	}
	list, errOut, code := clitest.Run(t, dir, "app", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, list, "kept")
}
