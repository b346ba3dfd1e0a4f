package cli_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"idvault/app/apptest"
	"idvault/exit/pgtest"
)

// The real binary end to end: gen-dump, load-dump, the exit server, import, decrypt; and the
// server's refusal of a database that holds no dump, naming what is missing.
func TestExitBinaryEndToEnd(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary against PostgreSQL")
	}
	dsn := pgtest.NewDB(t)
	dir := t.TempDir()
	dumpDir := filepath.Join(dir, "dump")
	_, errOut, code := apptest.RunCLI(t, dir, nil, "exit", "gen-dump", "--out", dumpDir, "--users", "10", "--resources", "24", "--decoy-apps", "1")
	require.Equal(t, 0, code, errOut)
	raw, err := os.ReadFile(filepath.Join(dumpDir, "app.json"))
	require.NoError(t, err)
	var app struct {
		AppID string `json:"app_id"`
	}
	require.NoError(t, json.Unmarshal(raw, &app))

	// Before the dump is loaded the server refuses to start, naming what is missing.
	_, errOut, code = apptest.RunCLI(t, dir, nil, "exit", "--db", dsn, "--app-id", app.AppID, "--listen", "127.0.0.1:0")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing")
	require.NotContains(t, errOut, "postgres://", "the DSN is not printed")

	_, errOut, code = apptest.RunCLI(t, dir, nil, "exit", "load-dump", "--db", dsn, dumpDir)
	require.Equal(t, 0, code, errOut)

	port := apptest.FreePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{"IDVAULT_EXIT__TOKEN=binary-token-0123456789", "IDVAULT_EXIT__DB=" + dsn}
	srv := startExit(t, dir, env, url, "exit", "--app-id", app.AppID, "--listen", "127.0.0.1:"+strconv.Itoa(port))

	// Half of the identities as bare lines (what createIdentity returns), half as gen-dump's JSON.
	raw, err = os.ReadFile(filepath.Join(dumpDir, "identities.jsonl"))
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	for i := 0; i < len(lines); i += 2 {
		var entry struct {
			Identity string `json:"identity"`
		}
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &entry))
		lines[i] = entry.Identity
	}
	mixed := filepath.Join(dir, "identities.txt")
	require.NoError(t, os.WriteFile(mixed, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	_, errOut, code = apptest.RunCLI(t, dir, env, "exit", "import", "--url", url, mixed)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "0 refused")
	require.NotContains(t, errOut, " 0 imported")
	out, errOut, code := apptest.RunCLI(t, dir, env, "exit", "decrypt", "--url", url, "--in", filepath.Join(dumpDir, "data"), "--out", filepath.Join(dir, "clear"))
	require.Equal(t, 1, code, "the dump's negative cases fail: %s %s", out, errOut)
	require.Contains(t, out, "decryption_failed")
	require.Contains(t, out, "key_not_found")
	require.Contains(t, errOut, "decrypted")

	require.NoError(t, srv.Process.Signal(syscall.SIGTERM))
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		require.NoError(t, err, "a clean exit on SIGTERM")
	case <-time.After(20 * time.Second):
		t.Fatal("the exit server did not stop on SIGTERM")
	}
	logs := srv.log()
	require.NotContains(t, logs, "binary-token-0123456789")
	require.NotContains(t, logs, dsn)
}

// exitProc is a running `idvault exit` server.
type exitProc struct {
	*exec.Cmd
	stderr *bytes.Buffer
	mu     *sync.Mutex
}

type lockedBuf struct {
	mu *sync.Mutex
	b  *bytes.Buffer
}

func (l lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// startExit runs the binary with args and waits until /healthz answers.
func startExit(t *testing.T, dir string, env []string, url string, args ...string) *exitProc {
	t.Helper()
	p := &exitProc{Cmd: exec.Command(apptest.Binary(t), args...), stderr: &bytes.Buffer{}, mu: &sync.Mutex{}}
	p.Env = append(os.Environ(), env...)
	p.Dir = dir
	p.Stderr = lockedBuf{p.mu, p.stderr}
	require.NoError(t, p.Start())
	t.Cleanup(func() { _ = p.Process.Kill() })
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(url + "/healthz"); err == nil {
			resp.Body.Close()
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("idvault exit did not answer: %s", p.log())
	return nil
}

func (p *exitProc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stderr.String()
}
