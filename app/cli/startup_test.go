package cli_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
)

// serveFails runs `idvault serve` in-process with environ over the embedded profile, expects it
// to fail, and returns the one line of its error (the last line of stderr).
func serveFails(t *testing.T, environ []string, args ...string) string {
	t.Helper()
	e := clitest.Env(t.TempDir())
	e.Environ = append(e.Environ, environ...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.Ready = func(string) { t.Error("the server started"); cancel() }
	_, errOut, code := clitest.RunWith(ctx, t, e, append([]string{"serve"}, args...)...)
	require.Equal(t, 1, code, errOut)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	return lines[len(lines)-1]
}

// requireEmpty fails unless dir holds nothing.
func requireEmpty(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	require.Empty(t, names, "nothing created in %s", dir)
}

// serve on a listen address already in use (by another idvault or another program) exits
// before it creates anything, with one line naming the address and what to do; the same for
// metrics.listen.
func TestServeRefusesAListenAddressInUse(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer taken.Close()
	addr := taken.Addr().String()

	dir := t.TempDir()
	data := []string{"IDVAULT_STORE__PATH=" + filepath.Join(dir, "idvault.db"), "IDVAULT_VERIFICATION__ENABLED=false"}
	line := serveFails(t, append(data, "IDVAULT_SERVER__LISTEN="+addr))
	require.Contains(t, line, "listen on "+addr+": the address is in use")
	require.Contains(t, line, "--listen or server.listen")
	requireEmpty(t, dir)

	line = serveFails(t, append(data, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_METRICS__LISTEN="+addr))
	require.Contains(t, line, "metrics.listen "+addr+": the address is in use")
	require.Contains(t, line, "set another metrics.listen")
	requireEmpty(t, dir)
}

// A --data (or store.path) whose directory does not exist, a typo, is refused with the command
// that creates it, instead of an empty server with a new master key; so is a store.key_file or
// admin.token_file in a missing directory. Nothing is created.
func TestServeRefusesAMissingDataDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	listen := []string{"IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false"}
	typo := filepath.Join(dir, "idvalt")
	line := serveFails(t, listen, "--data", filepath.Join(typo, "idvault.db"))
	require.Contains(t, line, "mkdir -p -m 0700 "+typo)
	require.Contains(t, line, "store.path or --data")
	line = serveFails(t, append(listen, "IDVAULT_STORE__PATH="+filepath.Join(dir, "a", "b", "idvault.db")))
	require.Contains(t, line, "mkdir -p -m 0700 "+filepath.Join(dir, "a", "b"))
	requireEmpty(t, dir)

	data := filepath.Join(dir, "data")
	require.NoError(t, os.Mkdir(data, 0o700))
	line = serveFails(t, append(listen, "IDVAULT_STORE__KEY_FILE="+filepath.Join(dir, "keys", "master.key")), "--data", filepath.Join(data, "idvault.db"))
	require.Contains(t, line, "the master key "+filepath.Join(dir, "keys", "master.key"))
	require.Contains(t, line, "mkdir -p -m 0700 "+filepath.Join(dir, "keys"))
	line = serveFails(t, append(listen, "IDVAULT_ADMIN__TOKEN_FILE="+filepath.Join(dir, "tokens", "admin.token")), "--data", filepath.Join(data, "idvault.db"))
	require.Contains(t, line, "mkdir -p -m 0700 "+filepath.Join(dir, "tokens"))
	requireEmpty(t, data)
}

// A data file written by a newer idvault (a later schema version) is refused in one line naming
// the file, both versions and what to do; the file is left as it was and nothing is created
// beside it (no admin token).
func TestServeRefusesANewerDataFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	path := filepath.Join(dir, "idvault.db")
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	// The meta bucket's "schema" key and its value, a big-endian uint64, lie side by side in
	// their page: the file as an idvault of schema 99 would leave it.
	schema := []byte("schema\x00\x00\x00\x00\x00\x00\x00")
	at := bytes.Index(raw, schema)
	require.Positive(t, at)
	raw[at+len(schema)] = 99
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	require.NoError(t, os.Remove(filepath.Join(dir, "admin.token")))

	line := serveFails(t, []string{"IDVAULT_STORE__PATH=" + path, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false"})
	require.Contains(t, line, "unsupported schema version: file has 99, this idvault reads up to 3: "+path)
	require.Contains(t, line, "restore the backup taken before the upgrade")
	after, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, raw, after, "the file is left as it was")
	_, err = os.Stat(filepath.Join(dir, "admin.token"))
	require.ErrorIs(t, err, os.ErrNotExist, "no new admin token")

	// The other commands that open the file say the same.
	_, errOut, code := clitest.Run(t, dir, "app", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "file has 99")
}
