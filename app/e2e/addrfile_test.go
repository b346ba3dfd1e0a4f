package e2e_test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// A server started with --listen (an address the configuration does not know) is found by
// the app and backup commands through the address it records beside the data file; a clean
// shutdown removes the record.
func TestCommandsFindAServerStartedWithListen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir) // server.listen: a free port nobody will listen on
	actual := "127.0.0.1:" + strconv.Itoa(apptest.FreePort(t))
	p := apptest.Start(t, dir, append(env, "IDVAULT_SERVER__LISTEN="+actual), "--listen", actual)
	addrFile := filepath.Join(dir, "idvault.db.addr")
	raw, err := os.ReadFile(addrFile)
	require.NoError(t, err)
	require.Equal(t, actual+"\n", string(raw))

	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "found", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"name": "found"`)
	out, errOut, code = apptest.RunCLI(t, dir, env, "backup", "--out", filepath.Join(dir, "hot.db"))
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "backup written")

	p.Stop(t)
	_, err = os.Stat(addrFile)
	require.ErrorIs(t, err, os.ErrNotExist, "a clean shutdown removes the address file")
	out, _, code = apptest.RunCLI(t, dir, env, "app", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, "found")
}

// A command that names the data file through a symbolic link finds the server that holds it
// (the address file sits beside the real file), instead of trying server.listen.
func TestCommandsFindTheServerThroughALink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir) // server.listen: a free port nobody will listen on
	actual := "127.0.0.1:" + strconv.Itoa(apptest.FreePort(t))
	apptest.Start(t, dir, append(env, "IDVAULT_SERVER__LISTEN="+actual), "--listen", actual)
	link := filepath.Join(dir, "link.db")
	require.NoError(t, os.Symlink(filepath.Join(dir, "idvault.db"), link))

	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--data", link, "--name", "linked", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"name": "linked"`)
	_, err := os.Stat(link + ".addr")
	require.ErrorIs(t, err, os.ErrNotExist, "one address file, beside the real data file")
}

// When the data file is locked and no server answers where the commands look, the error says
// what was tried, where the address came from, and what to do.
func TestUnreachableServerIsExplained(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	actual := "127.0.0.1:" + strconv.Itoa(apptest.FreePort(t))
	apptest.Start(t, dir, append(env, "IDVAULT_SERVER__LISTEN="+actual), "--listen", actual)
	addrFile := filepath.Join(dir, "idvault.db.addr")

	// The record is gone (say, deleted by hand): the commands fall back to server.listen.
	require.NoError(t, os.Remove(addrFile))
	_, errOut, code := apptest.RunCLI(t, dir, env, "app", "list")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no idvault server answers at")
	require.Contains(t, errOut, "address from server.listen")
	require.Contains(t, errOut, "IDVAULT_SERVER__LISTEN")
	require.Contains(t, errOut, filepath.Join(dir, "idvault.db"))

	// A stale record pointing nowhere.
	dead, _ := apptest.DeadPort(t)
	require.NoError(t, os.WriteFile(addrFile, []byte("127.0.0.1:"+strconv.Itoa(dead)+"\n"), 0o600))
	_, errOut, code = apptest.RunCLI(t, dir, env, "backup", "--out", filepath.Join(dir, "b.db"))
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "address from "+addrFile)
	require.NotContains(t, errOut, ".idvault-backup-")
}

// After a crash the stale address file is harmless: the data file is no longer locked, so the
// commands open it directly.
func TestStaleAddressFileAfterKill9(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	p := apptest.Start(t, dir, env)
	p.Kill9(t)
	_, err := os.Stat(filepath.Join(dir, "idvault.db.addr"))
	require.NoError(t, err, "a crash leaves the address file")
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "list")
	require.Equal(t, 0, code, errOut)
	require.True(t, strings.HasPrefix(out, "ID"), out)
}
