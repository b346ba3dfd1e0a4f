package cli_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
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
