package e2e_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// envFile reads KEY=VALUE lines as systemd's EnvironmentFile= does (comments skipped).
func envFile(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var env []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			env = append(env, line)
		}
	}
	return env
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// `idvault init` writes a production setup that serves, ready, on the first try with no
// editing; one command then turns the identity server on for a new app; a second init
// replaces nothing.
func TestInitThenServeIsReadyAtOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	etc, data := filepath.Join(dir, "etc"), filepath.Join(dir, "lib")
	listen := fmt.Sprintf("127.0.0.1:%d", apptest.FreePort(t))
	out, errOut, code := apptest.RunCLI(t, dir, nil, "init", "--dir", etc, "--data", data, "--listen", listen)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "idvault serve --config "+filepath.Join(etc, "config.yaml"))
	for name, mode := range map[string]os.FileMode{"master.key": 0o600, "admin.token": 0o600, "config.yaml": 0o644, "idvault.service": 0o644} {
		st, err := os.Stat(filepath.Join(etc, name))
		require.NoError(t, err, name)
		require.Equal(t, mode, st.Mode().Perm(), name)
	}
	token, err := os.ReadFile(filepath.Join(etc, "admin.token"))
	require.NoError(t, err)
	require.NotContains(t, out+errOut, strings.TrimSpace(string(token)), "the token is only in its file")
	unit, err := os.ReadFile(filepath.Join(etc, "idvault.service"))
	require.NoError(t, err)
	require.Contains(t, string(unit), "ExecStart="+apptest.Binary(t)+" serve --config "+filepath.Join(etc, "config.yaml")+"\n",
		"--bin defaults to the running binary")
	require.Contains(t, string(unit), "ProtectSystem=strict\n")
	require.Contains(t, string(unit), "ReadWritePaths="+data+"\n")
	require.Contains(t, string(unit), "LoadCredential=master.key:"+filepath.Join(etc, "master.key")+"\n")

	// The config check sees a production profile: no fake authentication, nothing to fix.
	out, errOut, code = apptest.RunCLI(t, dir, nil, "config", "check", "--config", filepath.Join(etc, "config.yaml"))
	require.Equal(t, 0, code, errOut)
	require.NotContains(t, out, "local-dev")

	env := []string{"IDVAULT_SERVER__LISTEN=" + listen} // what config.yaml already says: apptest.Start reads the URL here
	p := apptest.Start(t, dir, env, "--config", filepath.Join(etc, "config.yaml"))
	resp, err := http.Get(p.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = os.Stat(filepath.Join(data, "idvault.db"))
	require.NoError(t, err)

	// One command: an app, and the environment file that serves it from the identity server.
	idEnv := filepath.Join(etc, "identity-server.env")
	_, errOut, code = apptest.RunCLI(t, dir, nil, "app", "create", "--config", filepath.Join(etc, "config.yaml"), "--name", "shop", "--identity-server-env", idEnv)
	require.Equal(t, 0, code, errOut)
	st, err := os.Stat(idEnv)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	p.Stop(t)
	require.NotContains(t, p.Stderr.String(), "fake authentication is on")
	extra := envFile(t, idEnv)
	idToken := envValue(extra, "IDVAULT_IDENTITY_SERVER__TOKEN")
	require.Len(t, idToken, 43)
	p = apptest.Start(t, dir, append(env, extra...), "--config", filepath.Join(etc, "config.yaml"))
	for _, tc := range []struct {
		auth string
		want int
	}{{"", http.StatusUnauthorized}, {"Bearer " + idToken, http.StatusOK}} {
		req, err := http.NewRequest(http.MethodPost, p.URL+"/identity", strings.NewReader(`{"email":"alice@example.com"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, tc.want, resp.StatusCode)
	}
	resp, err = http.Get(p.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	p.Stop(t)

	// A second init replaces nothing, and says which file is in the way.
	key, err := os.ReadFile(filepath.Join(etc, "master.key"))
	require.NoError(t, err)
	_, errOut, code = apptest.RunCLI(t, dir, nil, "init", "--dir", etc, "--data", data)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, filepath.Join(etc, "config.yaml")+" exists")
	again, err := os.ReadFile(filepath.Join(etc, "master.key"))
	require.NoError(t, err)
	require.Equal(t, key, again)
	// Elsewhere, an existing data file is refused too: a new master key could not open it.
	_, errOut, code = apptest.RunCLI(t, dir, nil, "init", "--dir", filepath.Join(dir, "etc2"), "--data", data)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, filepath.Join(data, "idvault.db")+" exists")
	_, err = os.Stat(filepath.Join(dir, "etc2", "master.key"))
	require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
}

// systemd accepts the unit init writes, with the data in /var/lib (a dynamic user and a
// state directory) and elsewhere (the user who ran init, and ReadWritePaths).
func TestInitUnitPassesSystemdAnalyzeVerify(t *testing.T) {
	t.Parallel()
	analyze := apptest.Command(t, "systemd-analyze", "systemd")
	for name, data := range map[string]string{
		"var-lib":   "/var/lib/idvault-verify-" + filepath.Base(t.TempDir()),
		"elsewhere": filepath.Join(t.TempDir(), "data"),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			etc := filepath.Join(dir, "etc")
			_, errOut, code := apptest.RunCLI(t, dir, nil, "init", "--dir", etc, "--data", data, "--bin", apptest.Binary(t))
			require.Equal(t, 0, code, errOut)
			out, err := exec.Command(analyze, "verify", filepath.Join(etc, "idvault.service")).CombinedOutput()
			require.NoError(t, err, "%s", out)
			require.Empty(t, strings.TrimSpace(string(out)), "no warning")
			unit, err := os.ReadFile(filepath.Join(etc, "idvault.service"))
			require.NoError(t, err)
			if name == "var-lib" {
				require.Contains(t, string(unit), "DynamicUser=yes\nStateDirectory="+strings.TrimPrefix(data, "/var/lib/")+"\n")
				_, err := os.Stat(data)
				require.ErrorIs(t, err, os.ErrNotExist, "systemd creates a state directory")
			}
		})
	}
}

// A --listen that serve would refuse (no port) is refused before anything is written, instead
// of a config whose first serve fails.
func TestInitRefusesAListenAddressServeRefuses(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc")
	for _, listen := range []string{"0.0.0.0", "127.0.0.1:http", "127.0.0.1:70000", "bad host:80"} {
		_, errOut, code := apptest.RunCLI(t, dir, nil, "init", "--dir", etc, "--data", filepath.Join(dir, "lib"), "--listen", listen)
		require.Equal(t, 2, code, listen)
		require.Contains(t, errOut, "idvault init: --listen: ", listen)
		_, err := os.Stat(etc)
		require.ErrorIs(t, err, os.ErrNotExist, "nothing written for %q", listen)
	}
}

// --dir and --data must not overlap: the master key, the token and the config would otherwise
// sit where the sandboxed service may write, and in every copy of the data directory.
func TestInitRefusesOverlappingDirAndData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	etc := filepath.Join(dir, "etc")
	for _, data := range []string{etc, filepath.Join(etc, "data"), dir} {
		_, errOut, code := apptest.RunCLI(t, dir, nil, "init", "--dir", etc, "--data", data)
		require.Equal(t, 1, code, data)
		require.Contains(t, errOut, "overlap", data)
		_, err := os.Stat(etc)
		require.ErrorIs(t, err, os.ErrNotExist, "nothing written for --data %s", data)
	}
	_, errOut, code := apptest.RunCLI(t, dir, nil, "init", "--dir", etc, "--data", filepath.Join(dir, "etc-data"))
	require.Equal(t, 0, code, "a sibling whose name starts alike is no overlap: %s", errOut)
}
