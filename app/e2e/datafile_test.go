package e2e_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
)

// --data moves the master key and the admin token with the data file (their defaults are
// relative to its directory); an explicit key_file stays where it was set.
func TestDataFlagMovesKeyAndTokenFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "x", "y.db")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "x"), 0o700)) // serve creates no directory but ./data
	env := []string{"IDVAULT_SERVER__LISTEN=127.0.0.1:" + strconv.Itoa(apptest.FreePort(t)), "IDVAULT_VERIFICATION__ENABLED=false"}
	p := apptest.Start(t, dir, env, "--data", data)
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "moved", "--data", data)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "app created")
	p.Stop(t)
	for _, name := range []string{"y.db", "master.key", "admin.token"} {
		st, err := os.Stat(filepath.Join(dir, "x", name))
		require.NoError(t, err, name)
		require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), name)
	}
	_, err := os.Stat(filepath.Join(dir, "data"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing is written to ./data")

	// Explicitly set: kept as given.
	key := filepath.Join(dir, "keys", "mk")
	out, _, code = clitest.Run(t, dir, "config", "check", "--data", data)
	require.Equal(t, 0, code)
	require.Contains(t, out, "store.key_file = "+filepath.Join(dir, "x", "master.key"))
	require.Contains(t, out, "admin.token_file = "+filepath.Join(dir, "x", "admin.token"))
	out, _, code = clitest.RunEnv(t, []string{"IDVAULT_STORE__KEY_FILE=" + key}, "config", "check", "--data", data)
	require.Equal(t, 0, code)
	require.Contains(t, out, "store.key_file = "+key)
}
