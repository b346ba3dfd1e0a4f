package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/exit/pgtest"
)

// The real binary end to end: gen-dump, load-dump, the exit server, import, decrypt; and the
// server's refusal of a database that holds no dump, naming what is missing.
func TestExitBinaryEndToEnd(t *testing.T) {
	t.Parallel()
	dsn, dir, dumpDir := binaryDump(t, "--users", "10", "--resources", "24", "--decoy-apps", "1")
	raw, err := os.ReadFile(filepath.Join(dumpDir, "app.json"))
	require.NoError(t, err)
	var app struct {
		AppID string `json:"app_id"`
	}
	require.NoError(t, json.Unmarshal(raw, &app))

	// Before the dump is loaded the server refuses to start, naming what is missing.
	_, errOut, code := apptest.RunCLI(t, dir, nil, "exit", "--db", dsn, "--app-id", app.AppID, "--listen", "127.0.0.1:0")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "missing")
	require.NotContains(t, errOut, "postgres://", "the DSN is not printed")

	_, errOut, code = apptest.RunCLI(t, dir, nil, "exit", "load-dump", "--db", dsn, dumpDir)
	require.Equal(t, 0, code, errOut)

	port := apptest.FreePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	env := []string{"IDVAULT_EXIT__TOKEN=binary-token-0123456789", "IDVAULT_EXIT__DB=" + dsn}
	srv := apptest.StartBinary(t, dir, env, url, "exit", "--app-id", app.AppID, "--listen", "127.0.0.1:"+strconv.Itoa(port))

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

	srv.Stop(t)
	logs := srv.Stderr.String()
	require.NotContains(t, logs, "binary-token-0123456789")
	require.NotContains(t, logs, dsn)
}

// binaryDump is the start of the end-to-end tests of the real binary: a fresh PostgreSQL
// database (its DSN), a new working directory, and in it a dump written by `idvault exit
// gen-dump` with args (dumpDir), not loaded yet. It skips in -short mode.
func binaryDump(t *testing.T, args ...string) (dsn, dir, dumpDir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary against PostgreSQL")
	}
	dsn = pgtest.NewDB(t)
	dir = t.TempDir()
	dumpDir = filepath.Join(dir, "dump")
	_, errOut, code := apptest.RunCLI(t, dir, nil, append([]string{"exit", "gen-dump", "--out", dumpDir}, args...)...)
	require.Equal(t, 0, code, errOut)
	return dsn, dir, dumpDir
}
