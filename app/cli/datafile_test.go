package cli_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
)

// Only serve creates a data file: every other command run where there is none refuses, names
// the path and how to set it, and leaves nothing behind (no empty store, no new master key).
func TestCommandsOtherThanServeRefuseAMissingDataFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := strings.Repeat("A", 43) + "="
	for _, args := range [][]string{
		{"app", "list"}, {"app", "create", "--name", "x"}, {"app", "show", id}, {"app", "rotate-token", id},
		{"app", "delete", "--yes", id}, {"backup", "--out", filepath.Join(dir, "b.db")},
	} {
		out, errOut, code := clitest.Run(t, dir, args...)
		require.Equal(t, 1, code, "%v", args)
		require.Empty(t, out, "%v", args)
		require.Contains(t, errOut, "no data file at "+filepath.Join(dir, "idvault.db"), "%v", args)
		require.Contains(t, errOut, "idvault serve", "%v", args)
		require.Contains(t, errOut, "--data FILE", "%v", args)
		require.Contains(t, errOut, "store.path", "%v", args)
		entries, err := os.ReadDir(dir)
		require.NoError(t, err)
		require.Empty(t, entries, "%v created files", args)
	}
}

// A data file whose master key is missing is refused too: a new key would make every secret
// in it unreadable.
func TestMissingMasterKeyIsRefusedNotRecreated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	require.NoError(t, os.Rename(filepath.Join(dir, "master.key"), filepath.Join(dir, "master.key.moved")))
	_, errOut, code := clitest.Run(t, dir, "app", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no master key at "+filepath.Join(dir, "master.key"))
	require.Contains(t, errOut, "the data file "+filepath.Join(dir, "idvault.db")+" cannot be read", "both files are named, as serve names them")
	require.Contains(t, errOut, "store.key_file")
	_, err := os.Stat(filepath.Join(dir, "master.key"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

// A --data that is no data file (a config file given by mistake, a directory) is named as such
// by every command that opens the data file, with or without a master key beside it, rather than
// sending the operator after a key file; nothing is written.
func TestDataThatIsNoDataFileIsNamedAsSuch(t *testing.T) {
	t.Parallel()
	for _, withKey := range []bool{false, true} {
		dir := t.TempDir()
		if withKey {
			require.NoError(t, os.WriteFile(filepath.Join(dir, "master.key"), []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))+"\n"), 0o600))
		}
		config := filepath.Join(dir, "config.yaml")
		text := []byte("server:\n  listen: 127.0.0.1:8080\n" + strings.Repeat("# a documented key\n", 150))
		require.NoError(t, os.WriteFile(config, text, 0o600))
		sub := filepath.Join(dir, "sub")
		require.NoError(t, os.Mkdir(sub, 0o700))
		for path, want := range map[string]string{config: config + " is not an idvault data file", sub: sub + " is a directory"} {
			for _, args := range [][]string{{"app", "list"}, {"backup", "--out", filepath.Join(dir, "b.db")}} {
				_, errOut, code := clitest.Run(t, dir, append(args, "--data", path)...)
				require.Equal(t, 1, code, "%v %s", args, path)
				require.Contains(t, errOut, want, "%v (key beside: %v)", args, withKey)
				require.NotContains(t, errOut, "no master key", "%v", args)
			}
		}
		raw, err := os.ReadFile(config)
		require.NoError(t, err)
		require.Equal(t, text, raw)
		require.NoFileExists(t, filepath.Join(dir, "b.db"))
		if !withKey {
			require.NoFileExists(t, filepath.Join(dir, "master.key"))
		}
	}
}

// serve refuses the same data file without its master key, and with another key: it used to
// make a new key and start, every read of the file then an internal error and every new write
// sealed under the second key.
func TestServeRefusesADataFileWithoutItsMasterKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	_, _, code := clitest.Run(t, dir, "app", "create", "--name", "kept")
	require.Equal(t, 0, code)
	key := filepath.Join(dir, "master.key")
	require.NoError(t, os.Rename(key, key+".moved"))
	serve := func() (string, int) { // a server that starts stops at once (and the test fails)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		e := clitest.Env(dir)
		e.Environ = append(e.Environ, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false")
		e.Ready = func(string) { cancel() }
		_, errOut, code := clitest.RunWith(ctx, t, e, "serve")
		return errOut, code
	}
	errOut, code := serve()
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, key+" is missing, but the data file "+filepath.Join(dir, "idvault.db")+" exists")
	require.NoFileExists(t, key, "no new key is made")

	other := bytes.Repeat([]byte{7}, 32)
	require.NoError(t, os.WriteFile(key, []byte(base64.StdEncoding.EncodeToString(other)+"\n"), 0o600))
	errOut, code = serve()
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "the master key does not open this data file")
	require.Contains(t, errOut, "the key file given: "+key)
	_, errOut, code = clitest.Run(t, dir, "app", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "the master key does not open this data file")
	require.Contains(t, errOut, "the key file given: "+key)

	require.NoError(t, os.Rename(key+".moved", key))
	out, errOut, code := clitest.Run(t, dir, "app", "list")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "kept", "the right key still opens everything")
}
