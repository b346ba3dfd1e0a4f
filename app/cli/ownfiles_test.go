package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
)

// app create --out --force never writes an app's secrets over a file idvault runs on: the
// master key, the data file or the configuration would be lost, and no app is created.
func TestAppCreateOutNeverReplacesItsOwnFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	conf := filepath.Join(dir, "idvault.yaml")
	require.NoError(t, os.WriteFile(conf, []byte("fakeauth:\n  enabled: true\nverification:\n  enabled: false\n"), 0o600))
	for _, name := range []string{"master.key", "idvault.db", "admin.token", "idvault.yaml"} {
		target := filepath.Join(dir, name)
		before, err := os.ReadFile(target)
		require.NoError(t, err)
		_, errOut, code := clitest.Run(t, dir, "app", "create", "--config", conf, "--name", "app-"+name, "--out", target, "--force")
		require.Equal(t, 1, code, name)
		require.Contains(t, errOut, "--out "+target+" is a file idvault runs on", name)
		after, err := os.ReadFile(target)
		require.NoError(t, err)
		require.Equal(t, before, after, "%s untouched", name)
	}
	list, errOut, code := clitest.Run(t, dir, "app", "list")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, list, "app-", "no app created")

	// --force still replaces any other file.
	other := filepath.Join(dir, "app.txt")
	require.NoError(t, os.WriteFile(other, []byte("old"), 0o600))
	_, errOut, code = clitest.Run(t, dir, "app", "create", "--name", "kept", "--out", other, "--force")
	require.Equal(t, 0, code, errOut)
	raw, err := os.ReadFile(other)
	require.NoError(t, err)
	require.Contains(t, string(raw), "app secret:")
}

// The address file exists only while a server runs: with none running, an output written to
// its path would be overwritten by the next serve (an app's secret, a backup, lost). Its path
// is refused as the files that exist are, by app create --out and by backup --out, and nothing
// is written there.
func TestOutputsNeverTakeTheAddressFilesPath(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	addr := filepath.Join(dir, "idvault.db.addr")
	_, err := os.Stat(addr)
	require.ErrorIs(t, err, os.ErrNotExist, "no server runs: no address file")
	for _, args := range [][]string{
		{"app", "create", "--name", "lost", "--out", addr},
		{"app", "create", "--name", "lost", "--out", addr, "--force"},
		{"backup", "--out", addr},
		{"backup", "--out", addr, "--force"},
	} {
		_, errOut, code := clitest.Run(t, dir, args...)
		require.Equal(t, 1, code, "%v", args)
		require.Contains(t, errOut, addr+" is a file idvault runs on", "%v", args)
		_, err := os.Stat(addr)
		require.ErrorIs(t, err, os.ErrNotExist, "%v wrote nothing there", args)
	}
	list, errOut, code := clitest.Run(t, dir, "app", "list")
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, list, "lost", "no app created")
}
