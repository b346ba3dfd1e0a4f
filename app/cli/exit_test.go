package cli_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/cli"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

var testAppID = base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 32))

// runExit runs the program in-process with a fake exit database; ready gets the address.
func runExit(ctx context.Context, t *testing.T, db *exitfake.DB, environ []string, ready func(string), args ...string) (string, string, int) {
	t.Helper()
	return runWith(ctx, t, cli.Env{
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

// The real binary's decrypt, killed midway, leaves no partial file under a final name, and a
// rerun completes the tree.
func TestExitDecryptResumesAfterKill(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	db := exitfake.New()
	who, _ := db.AddUser()
	url, _ := apptest.ServeServer(t, exitserver.New(db, exitserver.Config{}))
	c := exitclient.New(url, "")
	_, err := c.Import(context.Background(), []exitclient.Identity{{Value: who, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)

	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	want := map[string][]byte{}
	for i := range 40 {
		clear := make([]byte, 3<<20)
		_, _ = rand.Read(clear)
		enc, err := db.Encrypt(who, encryption.V11, clear, encryption.EncryptOptions{})
		require.NoError(t, err)
		rel := filepath.Join(fmt.Sprintf("d%d", i%4), fmt.Sprintf("f%02d", i))
		require.NoError(t, os.MkdirAll(filepath.Join(in, filepath.Dir(rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(in, rel), enc, 0o600))
		want[rel] = clear
	}

	cmd := exec.Command(apptest.Binary(t), "exit", "decrypt", "--url", url, "--in", in, "--out", out, "--jobs", "2")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	finals := func() int {
		n := 0
		_ = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.HasSuffix(path, outfiles.PartSuffix) {
				n++
			}
			return nil
		})
		return n
	}
	deadline := time.Now().Add(30 * time.Second)
	for finals() < 5 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	killedAt := finals()
	require.Less(t, killedAt, 40, "killed before the end (stderr: %s)", stderr.String())
	for rel, clear := range want {
		got, err := os.ReadFile(filepath.Join(out, rel))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		require.True(t, bytes.Equal(clear, got), "%s is whole or absent, never partial", rel)
	}

	stdout, errOut, code := apptest.RunCLI(t, dir, nil, "exit", "decrypt", "--url", url, "--in", in, "--out", out)
	require.Equal(t, 0, code, "%s %s", stdout, errOut)
	require.Contains(t, errOut, fmt.Sprintf("%d already done", killedAt))
	for rel, clear := range want {
		got, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(t, err)
		require.True(t, bytes.Equal(clear, got), rel)
		_, err = os.Stat(filepath.Join(out, rel+outfiles.PartSuffix))
		require.True(t, os.IsNotExist(err), "no temporary file left after the rerun: %s", rel)
	}
}
