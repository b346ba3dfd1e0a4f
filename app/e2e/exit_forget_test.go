package e2e_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/pgtest"
)

// `idvault exit forget` with the real binary, server and PostgreSQL: identities imported, a file
// decrypted; forget without --yes lists the rows and deletes nothing (exit 2); with --yes it
// deletes them and says how many, but exits 1 naming a session whose snapshot keeps them in the
// files, and succeeds once it is gone; the server started again answers key_not_found.
func TestExitForgetEndToEnd(t *testing.T) {
	t.Parallel()
	dsn, dir, dumpDir := binaryDump(t, "--users", "4", "--resources", "8")
	// A database without the exit tables is not the exit database (a wrong --db): refused,
	// rather than "deleted 0 rows" and exit 0 while the keys stay where they are.
	for _, args := range [][]string{{"--yes"}, {}} {
		_, errOut, code := apptest.RunCLI(t, dir, nil, append([]string{"exit", "forget", "--db", dsn}, args...)...)
		require.Equal(t, 1, code, errOut)
		require.Contains(t, errOut, "is --db the exit database?")
	}
	_, errOut, code := apptest.RunCLI(t, dir, nil, "exit", "load-dump", "--db", dsn, dumpDir)
	require.Equal(t, 0, code, errOut)
	app, err := dump.ReadApp(dumpDir)
	require.NoError(t, err)
	ids, err := dump.ReadIdentities(dumpDir)
	require.NoError(t, err)
	manifest, err := dump.ReadManifest(dumpDir)
	require.NoError(t, err)
	var ok dump.ManifestEntry
	for _, e := range manifest {
		if e.Expected == dump.ExpectOK && e.ClearSize > 0 {
			ok = e
			break
		}
	}
	require.NotEmpty(t, ok.File)

	const token = "forget-token-0123456789"
	env := []string{"IDVAULT_EXIT__TOKEN=" + token, "IDVAULT_EXIT__DB=" + dsn}
	port := apptest.FreePort(t)
	url := "http://127.0.0.1:" + strconv.Itoa(port)
	appID := base64Std(app.ID)
	serve := func() *apptest.Proc {
		return apptest.StartBinary(t, dir, env, url, "exit", "--app-id", appID, "--listen", "127.0.0.1:"+strconv.Itoa(port))
	}
	call := func(method, path string, body []byte) (int, []byte) {
		req, err := http.NewRequest(method, url+path, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, b
	}
	ct, err := os.ReadFile(filepath.Join(dumpDir, ok.File))
	require.NoError(t, err)

	srv := serve()
	var list []string
	for _, id := range ids {
		list = append(list, id.Identity)
	}
	body, err := json.Marshal(map[string][]string{"identities": list})
	require.NoError(t, err)
	status, answer := call(http.MethodPut, "/v1/identities", body)
	require.Equal(t, http.StatusCreated, status, string(answer))
	status, clear := call(http.MethodPost, "/v1/decrypt", ct)
	require.Equal(t, http.StatusOK, status, string(clear))
	sum := sha256.Sum256(clear)
	require.Equal(t, ok.SHA256, hex.EncodeToString(sum[:]))
	srv.Stop(t)

	// Without --yes: the list, exit 2, nothing deleted.
	out, errOut, code := apptest.RunCLI(t, dir, env, "exit", "forget")
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "rerun with --yes")
	require.NotContains(t, errOut, "other sessions", "the server is stopped")
	require.Contains(t, out, "exit_identities: "+strconv.Itoa(len(ids))+" rows")
	require.Regexp(t, `exit_user_keys: [1-9]\d* rows`, out)
	require.Regexp(t, `exit_provisional_keys: [1-9]\d* rows`, out)
	again, _, code := apptest.RunCLI(t, dir, env, "exit", "forget")
	require.Equal(t, 2, code)
	require.Equal(t, out, again, "the first run deleted something")

	// With --yes while a psql session holds a snapshot older than the delete: the same counts,
	// deleted, but exit 1 naming the session and the command to rerun.
	pid, endSnapshot := psqlSnapshot(t, dsn)
	deleted, errOut, code := apptest.RunCLI(t, dir, env, "exit", "forget", "--yes", "--wait", "0s")
	require.Equal(t, 1, code, errOut)
	require.Equal(t, out, deleted)
	require.Contains(t, errOut, "the rows are deleted, but the files of exit_identities")
	require.Contains(t, errOut, "held by session pid "+pid+" (user postgres, application psql, since ")
	require.Contains(t, errOut, "pg_terminate_backend("+pid+")")
	require.Contains(t, errOut, "rerun: idvault exit forget --yes")
	require.NotContains(t, errOut, "copies it does not reach")
	endSnapshot()
	// Rerun: nothing left to delete, done, and what is out of reach is listed.
	rerun, errOut, code := apptest.RunCLI(t, dir, env, "exit", "forget", "--yes")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, rerun, "exit_user_keys: 0 rows")
	require.Contains(t, errOut, "deleted 0 rows")
	require.Contains(t, errOut, "hold none of them")
	for _, left := range []string{"write-ahead log", "backups", "tanker_provisional_keys", "server log"} {
		require.Contains(t, errOut, left)
	}
	after, _, code := apptest.RunCLI(t, dir, env, "exit", "forget")
	require.Equal(t, 2, code)
	for _, line := range strings.Split(strings.TrimSpace(after), "\n") {
		require.True(t, strings.HasSuffix(line, ": 0 rows"), line)
	}

	srv = serve()
	status, answer = call(http.MethodPost, "/v1/decrypt", ct)
	require.Equal(t, http.StatusNotFound, status, string(answer))
	require.Contains(t, string(answer), `"key_not_found"`)
	// With a server running on the database, forget warns that it keeps keys in memory.
	_, errOut, code = apptest.RunCLI(t, dir, env, "exit", "forget", "--yes")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "other sessions are connected to this database")
	srv.Stop(t)
	require.NotContains(t, srv.Stderr.String(), token)
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// psqlSnapshot starts psql on dsn holding a REPEATABLE READ snapshot, and returns its backend
// pid and a function that commits and waits for psql to exit.
func psqlSnapshot(t *testing.T, dsn string) (string, func()) {
	t.Helper()
	cmd := exec.Command(pgtest.Bin(t, "psql"), "-X", "-qtA", "-v", "ON_ERROR_STOP=1", dsn)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	_, err = io.WriteString(stdin, "BEGIN ISOLATION LEVEL REPEATABLE READ;\nSELECT pg_backend_pid();\n")
	require.NoError(t, err)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	require.NoError(t, err)
	pid := strings.TrimSpace(line)
	_, err = strconv.Atoi(pid)
	require.NoError(t, err, line)
	return pid, func() {
		_, err := io.WriteString(stdin, "COMMIT;\n")
		require.NoError(t, err)
		require.NoError(t, stdin.Close())
		require.NoError(t, cmd.Wait())
	}
}
