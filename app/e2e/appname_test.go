package e2e_test

import (
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/identity"
)

// A second app with the name of another (in any case) is refused with a clear message, whether
// the command opens the data file itself or goes through the running server's admin API.
func TestAppCreateRefusesATakenName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	apptest.InitData(t, dir, env)
	_, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "shop")
	require.Equal(t, 0, code, errOut)

	const want = `idvault: an app named "Shop" already exists (names are compared case-insensitively): choose another --name; "idvault app list" shows them` + "\n"
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "Shop")
	require.Equal(t, 1, code)
	require.Empty(t, out, "no secret of an app that was not created")
	require.Equal(t, want, errOut)

	p := apptest.Start(t, dir, env)
	out, errOut, code = apptest.RunCLI(t, dir, env, "app", "create", "--name", "Shop")
	require.Equal(t, 1, code)
	require.Empty(t, out)
	require.Equal(t, want, errOut, "the same words through the admin API")
	status, body := adminDo(t, p, "POST", "/admin/apps", map[string]any{"name": " SHOP "})
	require.Equal(t, 409, status)
	require.Contains(t, string(body), `"code":"app_name_taken"`)
	require.Contains(t, string(body), `an app named \"SHOP\" already exists`)
	list, errOut, code := apptest.RunCLI(t, dir, env, "app", "list", "--json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 1, strings.Count(list, `"name"`))
	p.Stop(t)
}

// An app name is printable text: a name that would print as nothing, move the text around or
// drive the terminal (a C1 control such as U+009B, a terminal's CSI; a zero-width space that
// makes "Sh\u200bop" a second "Shop"; a right-to-left override) is refused, through the
// running server's admin API as through the command, while a 100-character name of
// two-byte letters is accepted (the limit is in characters, as the message says).
func TestAppNamesArePrintable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	apptest.InitData(t, dir, env)
	_, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "Sh\u200bop")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "printable characters")

	p := apptest.Start(t, dir, env)
	status, body := adminDo(t, p, "POST", "/admin/apps", map[string]any{"name": "Shop"})
	require.Equal(t, 201, status, string(body))
	for _, name := range []string{"Sh\u200bop", "x\u009b31mred", "next\u0085line", "\u202egnp.exe", "a\u2028b", "a\u00adb", "tab\there", "nul\x00"} {
		status, body := adminDo(t, p, "POST", "/admin/apps", map[string]any{"name": name})
		require.Equal(t, 400, status, "%q: %s", name, body)
		require.Contains(t, string(body), "name must be 1 to 100 printable characters", "%q", name)
	}
	status, body = adminDo(t, p, "POST", "/admin/apps", map[string]any{"name": strings.Repeat("é", 100)})
	require.Equal(t, 201, status, "100 characters (200 bytes): %s", body)
	status, body = adminDo(t, p, "POST", "/admin/apps", map[string]any{"name": strings.Repeat("é", 101)})
	require.Equal(t, 400, status, "101 characters: %s", body)
	list, errOut, code := apptest.RunCLI(t, dir, env, "app", "list", "--json")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, 2, strings.Count(list, `"name"`), list)
	p.Stop(t)
}

// A name from before the rule never reaches the terminal raw: `app list` and `app show`
// escape what is not printable. The config file cannot bring such a name any more: a declared
// app's name follows the same rule, and the command refuses the file naming the key.
func TestAppListEscapesUnprintableNames(t *testing.T) {
	t.Parallel()
	id, _, err := identity.GenerateApp(rand.Reader)
	require.NoError(t, err)
	dir, env := dataDirWithApp(t, id, "evil\u009b2J\u202e")
	for _, args := range [][]string{{"app", "list"}, {"app", "show", base64.URLEncoding.EncodeToString(id)}} {
		out, errOut, code := apptest.RunCLI(t, dir, env, args...)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, `evil\u009b2J\u202e`, args[1])
		require.NotContains(t, out, "\u009b", args[1])
		require.NotContains(t, out, "\u202e", args[1])
	}

	cfg := filepath.Join(dir, "idvault.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("apps:\n  - name: \"evil\\u009b2J\\u202e\"\n"+
		"    secret: cTMoGGUKhwN47ypq4xAXAtVkNWeyUtMltQnYwJhxWYSvqjPVGmXd2wwa7y17QtPTZhn8bxb015CZC/e4ZI7+MQ==\n"+
		"    auth_token: declared-token-0123456789\n"), 0o600))
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "list", "--config", cfg)
	require.NotEqual(t, 0, code, out)
	require.Contains(t, errOut, `apps[0].name: must be 1 to 100 printable characters`)
	require.Contains(t, errOut, `evil\u009b2J\u202e`, "the name shown escaped")
	require.NotContains(t, errOut, "\u009b")
	require.NotContains(t, errOut, "\u202e")
}
