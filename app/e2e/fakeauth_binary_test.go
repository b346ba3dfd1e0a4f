package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// The real binary: refuses a non-loopback address, warns in the log and on /readyz, and serves
// a test-mode app created with the CLI.
func TestBinarySafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)

	t.Run("refuses a non-loopback listen address", func(t *testing.T) {
		remote := slices.Concat(env, []string{fmt.Sprintf("IDVAULT_SERVER__LISTEN=0.0.0.0:%d", apptest.FreePort(t))})
		require.Contains(t, serveRefused(t, dir, remote), "fakeauth")
	})

	apptest.InitData(t, dir, env)
	stdout, stderr, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "fa", "--test", "--json")
	require.Zero(t, code, "stderr: %s", stderr)
	var created struct {
		App struct {
			URLID string `json:"url_id"`
		} `json:"app"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &created), stdout)

	p := apptest.Start(t, dir, env)
	resp, err := http.Get(p.URL + "/readyz")
	require.NoError(t, err)
	var ready struct{ Warnings []string }
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&ready))
	resp.Body.Close()
	require.Len(t, ready.Warnings, 1)
	require.Contains(t, ready.Warnings[0], "fake authentication is on")

	// Padded with %3D, as the native client sends it.
	resp, err = http.Get(p.URL + "/apps/" + created.App.URLID + "%3D/private_identity?email=bin%40example.com")
	require.NoError(t, err)
	var got map[string]string
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NotEmpty(t, got["private_permanent_identity"])
	p.Stop(t)

	logs := p.Stderr.String() + p.Stdout.String()
	require.Contains(t, logs, "fake authentication is on")
	require.NotContains(t, logs, got["private_permanent_identity"])
	require.NotContains(t, logs, "bin@example.com")

	t.Run("off: no warning, routes answer feature_not_enabled", func(t *testing.T) {
		off := append(append([]string{}, env...), "IDVAULT_FAKEAUTH__ENABLED=false")
		p := apptest.Start(t, dir, off)
		resp, err := http.Get(p.URL + "/readyz")
		require.NoError(t, err)
		var ready struct{ Warnings []string }
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ready))
		resp.Body.Close()
		require.Empty(t, ready.Warnings)
		resp, err = http.Get(p.URL + "/apps/" + created.App.URLID + "/private_identity?email=bin%40example.com")
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		p.Stop(t)
	})
}
