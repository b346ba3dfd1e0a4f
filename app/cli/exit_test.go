package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/cli"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

var testAppID = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// runExit runs the program in-process with a fake exit database; ready gets the address.
func runExit(ctx context.Context, t *testing.T, db *exitfake.DB, environ []string, ready func(string), args ...string) (string, string, int) {
	t.Helper()
	return clitest.RunWith(ctx, t, cli.Env{
		Environ: environ, Ready: ready,
		OpenExitDB: func(context.Context, config.Exit) (exitserver.DB, func(), error) {
			return db, func() {}, nil
		},
	}, args...)
}

func TestExitHelpListsEveryFlag(t *testing.T) {
	t.Parallel()
	out, errOut, code := runExit(context.Background(), t, nil, nil, nil, "exit", "--help")
	require.Equal(t, 0, code, errOut)
	for _, flag := range []string{"--listen", "--db", "--app-id", "--token", "--insecure", "--batch-limit", "--max-body", "--key-cache", "import", "decrypt", "gen-dump", "load-dump"} {
		require.Contains(t, out, flag)
	}
	for _, sub := range []string{"import", "decrypt"} {
		out, errOut, code := runExit(context.Background(), t, nil, nil, nil, "exit", sub, "--help")
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "Usage: idvault exit "+sub)
	}
}

func TestExitServerRefusals(t *testing.T) {
	t.Parallel()
	db := exitfake.New()
	_, errOut, code := runExit(context.Background(), t, db, nil, nil, "exit", "--app-id", testAppID)
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--db")
	_, errOut, code = runExit(context.Background(), t, db, nil, nil, "exit", "--db", "postgres://x", "--app-id", "short")
	require.Equal(t, 3, code)
	require.Contains(t, errOut, "exit.app_id")
	_, errOut, code = runExit(context.Background(), t, db, nil, nil, "exit", "--db", "postgres://x", "--app-id", testAppID, "--listen", "0.0.0.0:0")
	require.Equal(t, 3, code, "a non-loopback listen without a token is refused")
	require.Contains(t, errOut, "exit.insecure")
	_, errOut, code = runExit(context.Background(), t, db, nil, nil, "exit", "--db", "postgres://x", "--app-id", testAppID, "--max-body", "lots")
	require.Equal(t, 3, code)
	require.Contains(t, errOut, "exit.max_body")

	// --insecure lets it start.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, errOut, code = runExit(ctx, t, db, nil, func(string) { cancel() }, "exit", "--db", "postgres://x", "--app-id", testAppID, "--listen", "0.0.0.0:0", "--insecure")
	require.Equal(t, 0, code, errOut)
}

// The server, import and decrypt commands together, in-process, with the token from the
// environment and settings from IDVAULT_EXIT__*.
func TestExitCommandsRoundTrip(t *testing.T) {
	t.Parallel()
	db := exitfake.New()
	tok := "env-token-0123456789"
	env := []string{"IDVAULT_EXIT__TOKEN=" + tok, "IDVAULT_EXIT__BATCH_LIMIT=7", "IDVAULT_EXIT__DB=postgres://x", "IDVAULT_EXIT__APP_ID=" + testAppID}
	ctx, cancel := context.WithCancel(context.Background())
	addrc := make(chan string, 1)
	done := make(chan struct{})
	var serverErr string
	go func() {
		defer close(done)
		_, serverErr, _ = runExit(ctx, t, db, env, func(a string) { addrc <- a }, "exit", "--listen", "127.0.0.1:0")
	}()
	var url string
	select {
	case a := <-addrc:
		url = "http://" + a
	case <-time.After(10 * time.Second):
		t.Fatal("the exit server did not start")
	}

	dir := t.TempDir()
	var lines []string
	var ids []string
	for i := range 20 {
		id, _ := db.AddUser()
		ids = append(ids, id)
		line, _ := json.Marshal(map[string]string{"email": fmt.Sprintf("u%d@example.com", i), "identity": id})
		lines = append(lines, string(line))
	}
	lines = append(lines, `{"email": "bad@example.com", "identity": "not-an-identity"}`)
	file := filepath.Join(dir, "identities.jsonl")
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	out, errOut, code := runExit(context.Background(), t, db, env, nil, "exit", "import", "--url", url, "--batch", "7", file)
	require.Equal(t, 1, code, "a refused identity makes the exit code non-zero: %s %s", out, errOut)
	require.Contains(t, errOut, "21 identities: 20 imported, 0 already imported, 1 refused")
	require.Contains(t, errOut, "identities.jsonl\":21: refused")
	for _, id := range ids {
		require.True(t, db.IsImported(id))
	}

	in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	clear := make([]byte, 5000)
	_, _ = rand.Read(clear)
	enc, err := db.Encrypt(ids[3], encryption.V10, clear, encryption.EncryptOptions{})
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Join(in, "x"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(in, "x", "ok.bin"), enc, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(in, "bad.bin"), []byte{1}, 0o600))
	out, errOut, code = runExit(context.Background(), t, db, env, nil, "exit", "decrypt", "--url", url, "--in", in, "--out", outDir)
	require.Equal(t, 1, code, "%s %s", out, errOut)
	require.Contains(t, out, "\"bad.bin\"\ttruncated_data")
	require.Contains(t, errOut, "2 files: 1 decrypted")
	got, err := os.ReadFile(filepath.Join(outDir, "x", "ok.bin"))
	require.NoError(t, err)
	require.Equal(t, clear, got)

	// Without the token: one message, exit 2, nothing written.
	out, errOut, code = runExit(context.Background(), t, db, nil, nil, "exit", "decrypt", "--url", url, "--in", in, "--out", filepath.Join(dir, "out2"))
	require.Equal(t, 2, code, "%s %s", out, errOut)
	require.Contains(t, errOut, "refused the token")
	require.NoDirExists(t, filepath.Join(dir, "out2"))

	cancel()
	<-done
	require.NotContains(t, serverErr, tok, "the token never reaches the log")
	require.NotContains(t, serverErr, ids[0][:30], "nor an identity")
}
