package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
)

// adminDo calls the admin API of a running server.
func adminDo(t *testing.T, p *apptest.Proc, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, _ := json.Marshal(body)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, p.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+p.AdminToken(t))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

func TestBinaryRunsWithNoConfigFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	port := apptest.FreePort(t)
	// Only the port is overridden (8080 may be taken); everything else is the embedded profile.
	p := apptest.Start(t, dir, []string{fmt.Sprintf("IDVAULT_SERVER__LISTEN=127.0.0.1:%d", port)})
	resp, err := http.Get(p.URL + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	_, err = os.Stat(filepath.Join(dir, "data", "idvault.db"))
	require.NoError(t, err, "data under ./data")
	st, err := os.Stat(filepath.Join(dir, "data", "master.key"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	st, err = os.Stat(filepath.Join(dir, "data", "admin.token"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())
	p.Stop(t)
	raw, err := os.ReadFile(filepath.Join(dir, "data", "admin.token"))
	require.NoError(t, err)
	token := strings.TrimSpace(string(raw))
	require.Len(t, token, 43)
	require.NotContains(t, p.Stdout.String()+p.Stderr.String(), token, "stdout is a pipe: the token is only in its file")
	require.Contains(t, p.Stderr.String(), "generated the admin token")
	require.Contains(t, p.Stderr.String(), filepath.Join("data", "admin.token"))
	require.Contains(t, p.Stderr.String(), "fake authentication is on")
}

func TestAppCreateWhileServerRunsAndStopped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	apptest.InitData(t, dir, env)

	// Stopped: the CLI opens the data file itself.
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "offline", "--test", "--json")
	require.Equal(t, 0, code, errOut)
	var off clitest.Created
	require.NoError(t, json.Unmarshal([]byte(out), &off))

	// Running: the file is locked, the CLI goes through the admin API.
	p := apptest.Start(t, dir, env)
	out, errOut, code = apptest.RunCLI(t, dir, env, "app", "create", "--name", "online", "--test", "--json")
	require.Equal(t, 0, code, errOut)
	var on clitest.Created
	require.NoError(t, json.Unmarshal([]byte(out), &on))
	require.True(t, on.App.Test)
	require.Len(t, on.AppSecret, 88)

	secrets := []string{off.AppSecret, off.AuthToken, on.AppSecret, on.AuthToken}
	assertNoSecret := func(where, text string) {
		for _, s := range secrets {
			require.NotContains(t, text, s, "%s shows a secret or token", where)
		}
	}
	for _, args := range [][]string{{"app", "list", "--json"}, {"app", "show", on.App.ID}, {"app", "show", off.App.ID, "--json"}} {
		out, errOut, code := apptest.RunCLI(t, dir, env, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		assertNoSecret(fmt.Sprint(args), out)
	}
	status, body := adminDo(t, p, http.MethodGet, "/admin/apps", nil)
	require.Equal(t, http.StatusOK, status)
	require.Contains(t, string(body), on.App.ID)
	require.Contains(t, string(body), off.App.ID)
	assertNoSecret("GET /admin/apps", string(body))

	// Rotate and delete through the running server.
	out, _, code = apptest.RunCLI(t, dir, env, "app", "rotate-token", on.App.ID, "--json")
	require.Equal(t, 0, code)
	require.NotContains(t, out, on.AuthToken)
	_, _, code = apptest.RunCLI(t, dir, env, "app", "delete", off.App.ID)
	require.Equal(t, 0, code)

	// Hot backup through the running server.
	backup := filepath.Join(dir, "hot.db")
	out, errOut, code = apptest.RunCLI(t, dir, env, "backup", "--out", backup)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "backup written")

	p.Stop(t)
	assertNoSecret("server logs", p.Stderr.String())
	out, _, code = apptest.RunCLI(t, dir, env, "app", "list")
	require.Equal(t, 0, code)
	require.Contains(t, out, on.App.ID)
	require.NotContains(t, out, off.App.ID)
	out, _, code = apptest.RunCLI(t, dir, env, "app", "list", "--data", backup)
	require.Equal(t, 0, code)
	require.Contains(t, out, on.App.ID, "the hot backup holds the app")
}

func TestSecondServerOnSameDataFailsFast(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	apptest.Start(t, dir, env)
	env2 := append(append([]string{}, env...), fmt.Sprintf("IDVAULT_SERVER__LISTEN=127.0.0.1:%d", apptest.FreePort(t)))
	start := time.Now()
	_, errOut, code := apptest.RunCLI(t, dir, env2, "serve")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "locked by another process")
	require.Less(t, time.Since(start), 10*time.Second)
}

// kill -9 in the middle of app creations: every app the server acknowledged is there after a
// restart.
func TestKill9LosesNoAcknowledgedApp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	p := apptest.Start(t, dir, env)
	token := p.AdminToken(t)

	var mu sync.Mutex
	acked := map[string]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 5 * time.Second}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest(http.MethodPost, p.URL+"/admin/apps", bytes.NewBufferString(fmt.Sprintf(`{"name":"w%d-%d","test":true}`, w, i)))
				req.Header.Set("Authorization", "Bearer "+token)
				resp, err := client.Do(req)
				if err != nil {
					return // the server died
				}
				var out clitest.Created
				err = json.NewDecoder(resp.Body).Decode(&out)
				resp.Body.Close()
				if err == nil && resp.StatusCode == http.StatusCreated {
					mu.Lock()
					acked[out.App.ID] = true
					mu.Unlock()
				}
			}
		}(w)
	}
	require.Eventually(t, func() bool { mu.Lock(); defer mu.Unlock(); return len(acked) >= 40 }, 30*time.Second, 10*time.Millisecond)
	p.Kill9(t)
	close(stop)
	wg.Wait()

	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "list", "--json")
	require.Equal(t, 0, code, errOut)
	var list struct {
		Apps []struct{ ID string } `json:"apps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	have := map[string]bool{}
	for _, a := range list.Apps {
		have[a.ID] = true
	}
	mu.Lock()
	defer mu.Unlock()
	for id := range acked {
		require.True(t, have[id], "acknowledged app %s lost after kill -9", id)
	}
}

func TestGracefulShutdownClosesTheStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := apptest.DataEnv(t, dir)
	p := apptest.Start(t, dir, env)
	p.Stop(t)
	require.Contains(t, p.Stderr.String(), "shutting down")
	lines := strings.Split(strings.TrimSpace(p.Stderr.String()), "\n")
	require.Contains(t, lines[len(lines)-1], "idvault stopped cleanly", "a clean shutdown ends with a final line")
	// The store was closed: the CLI can open the file at once.
	_, errOut, code := apptest.RunCLI(t, dir, env, "app", "list")
	require.Equal(t, 0, code, errOut)
}
