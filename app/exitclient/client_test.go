package exitclient_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/tree"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

const token = "client-test-token-0123"

func server(t *testing.T, cfg exitserver.Config) (*exitfake.DB, *exitclient.Client) {
	t.Helper()
	db := exitfake.New()
	cfg.Token = token
	url, _ := apptest.ServeServer(t, exitserver.New(db, cfg))
	c := exitclient.New(url, token)
	c.HTTP.Transport = apptest.CheckTransport(c.HTTP.Transport, apptest.LoadExitAPIDoc) // every answer keeps to exit.json
	c.Backoff = 10 * time.Millisecond
	return db, c
}

// echoClient is the client of a stand-in server that "decrypts" a file to its own bytes.
func echoClient(t *testing.T) *exitclient.Client {
	t.Helper()
	srv := apptest.StandInExit(t, apptest.EchoDecrypt, nil)
	return exitclient.New(srv.URL, token)
}

func TestReadIdentities(t *testing.T) {
	t.Parallel()
	jsonl := "{\"email\":\"a@x.io\",\"identity\":\"ID-A\"}\n\n\"ID-B\"\n{\"private_permanent_identity\":\"ID-C\",\"private_provisional_identity\":\"ID-D\"}\n"
	got, err := exitclient.ReadIdentities(strings.NewReader(jsonl))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{"ID-A", 1}, {"ID-B", 3}, {"ID-C", 4}, {"ID-D", 4}}, got)

	got, err = exitclient.ReadIdentities(strings.NewReader(` [ "ID-A", {"identity": "ID-B"} ] `))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{"ID-A", 1}, {"ID-B", 2}}, got)

	// Every identity key of an entry is taken, each value once: none is silently dropped.
	got, err = exitclient.ReadIdentities(strings.NewReader(`{"identity": "ID-A", "private_identity": "ID-B", "private_provisional_identity": "ID-C"}` + "\n" +
		`{"identity": "ID-D", "private_identity": "ID-D"}`))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{"ID-A", 1}, {"ID-B", 1}, {"ID-C", 1}, {"ID-D", 2}}, got)

	// Line numbers are the file's, whatever comes before the first entry (blank lines, a BOM):
	// the refused entries are named by them.
	got, err = exitclient.ReadIdentities(strings.NewReader("\xef\xbb\xbf\r\n\n  \"ID-A\"\n\"ID-B\"\n"))
	require.NoError(t, err)
	require.Equal(t, []exitclient.Identity{{"ID-A", 3}, {"ID-B", 4}}, got)
	_, err = exitclient.ReadIdentities(strings.NewReader("\n\n\"ID-A\"\nbad!\n"))
	require.ErrorContains(t, err, "line 4:")

	for name, bad := range map[string]string{
		"not json": "\"ID-A\"\nsecret-looking-garbage!\n", "no identity field": `{"email": "a@x.io"}`,
		"empty": `""`, "broken array": `["ID-A", `, "number field": `{"identity": 3}`,
		"two arrays": "[\"ID-A\"]\n[\"ID-B\"]\n", "text after the array": `["ID-A"] secret-looking-garbage`,
		"a key twice": `{"identity": "ID-A", "identity": "ID-B"}`, "an unknown key twice": `{"secret-looking-garbage": 1, "secret-looking-garbage": 2, "identity": "ID-A"}`,
	} {
		_, err := exitclient.ReadIdentities(strings.NewReader(bad))
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "secret-looking-garbage", "errors never quote an entry")
	}
	got, err = exitclient.ReadIdentities(strings.NewReader(""))
	require.NoError(t, err)
	require.Empty(t, got)
}

func TestImportBatchesAndReportsRefused(t *testing.T) {
	t.Parallel()
	db, c := server(t, exitserver.Config{BatchLimit: 500})
	var ids []exitclient.Identity
	for i := range 1203 {
		id, _ := db.AddUser()
		if i == 10 || i == 700 {
			id = "not-an-identity"
		}
		ids = append(ids, exitclient.Identity{Value: id, Line: i + 1})
	}
	var calls []int
	sum, err := c.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 500, Progress: func(done, total int) {
		require.Equal(t, 1203, total)
		calls = append(calls, done)
	}})
	require.NoError(t, err)
	require.Len(t, calls, 3, "one progress call per batch")
	require.IsIncreasing(t, calls)
	require.Equal(t, 1203, calls[2])
	require.Equal(t, 1201, sum.Imported)
	require.Equal(t, []exitclient.Refused{{Line: 11, Reason: "user not in the dump"}, {Line: 701, Reason: "user not in the dump"}}, sum.Refused)
	require.True(t, db.IsImported(ids[11].Value))

	sum, err = c.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 500})
	require.NoError(t, err)
	require.Equal(t, 0, sum.Imported)
	require.Equal(t, 1201, sum.AlreadyImported, "a second run is harmless")

	// A batch over the server's limit is split in halves until the server takes it.
	sum, err = c.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 1203})
	require.NoError(t, err)
	require.Equal(t, 1201, sum.AlreadyImported)
	require.Len(t, sum.Refused, 2)
}

func TestImportRetriesWhileTheDatabaseIsDown(t *testing.T) {
	t.Parallel()
	db, c := server(t, exitserver.Config{})
	id, _ := db.AddUser()
	db.SetDown(true)
	go func() {
		time.Sleep(150 * time.Millisecond)
		db.SetDown(false)
	}()
	c.Attempts = 30
	sum, err := c.Import(context.Background(), []exitclient.Identity{{Value: id, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	require.Equal(t, 1, sum.Imported)

	// A database that stays down ends the run once the retry budget is spent, naming the URL.
	db.SetDown(true)
	c.Attempts, c.Budget = 2, exitclient.NewRetryBudget(200*time.Millisecond)
	_, err = c.Import(context.Background(), []exitclient.Identity{{Value: id, Line: 1}}, exitclient.ImportOptions{})
	require.Equal(t, "server_unavailable", exitclient.Code(err))
	require.Contains(t, err.Error(), c.URL)
	require.Contains(t, err.Error(), "database_unavailable")

	dead := exitclient.New("http://127.0.0.1:1", "")
	dead.Backoff, dead.Budget = time.Millisecond, exitclient.NewRetryBudget(100*time.Millisecond)
	_, err = dead.Import(context.Background(), []exitclient.Identity{{Value: id, Line: 1}}, exitclient.ImportOptions{})
	require.Equal(t, "server_unavailable", exitclient.Code(err))
	require.Contains(t, err.Error(), "http://127.0.0.1:1")

	_, bad := server(t, exitserver.Config{})
	bad.Token = "wrong-token-wrong-token"
	_, err = bad.Import(context.Background(), []exitclient.Identity{{Value: id, Line: 1}}, exitclient.ImportOptions{})
	require.Equal(t, "client_config", exitclient.Code(err))
	require.NotContains(t, err.Error(), bad.Token)
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
	require.NoError(t, os.WriteFile(path, data, 0o600))
}

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func TestDecryptTreeMirrorsReportsAndResumes(t *testing.T) {
	t.Parallel()
	db, c := server(t, exitserver.Config{})
	who, _ := db.AddUser()
	stranger, _ := db.AddUser()
	_, err := c.Import(context.Background(), []exitclient.Identity{{Value: who, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)

	in, out := t.TempDir(), filepath.Join(t.TempDir(), "clear")
	want := map[string][]byte{}
	for i, v := range []encryption.Version{encryption.V2, encryption.V3, encryption.V4, encryption.V5, encryption.V6, encryption.V7, encryption.V8, encryption.V9, encryption.V10, encryption.V11} {
		clear := random(100 + i*5000)
		opts := encryption.EncryptOptions{}
		if v.IsStream() {
			opts.ChunkSize = 4096
		}
		enc, err := db.Encrypt(who, v, clear, opts)
		require.NoError(t, err)
		rel := filepath.Join(fmt.Sprintf("dir%d", i%3), "sub", fmt.Sprintf("file-%d.bin", i))
		write(t, filepath.Join(in, rel), enc)
		want[rel] = clear
	}
	notMine, err := db.Encrypt(stranger, encryption.V3, []byte("not yours"), encryption.EncryptOptions{})
	require.NoError(t, err)
	write(t, filepath.Join(in, "a-not-mine.bin"), notMine)
	write(t, filepath.Join(in, "b-garbage.bin"), []byte{99, 1, 2, 3})
	long, err := db.Encrypt(who, encryption.V11, random(200<<10), encryption.EncryptOptions{ChunkSize: 4096})
	require.NoError(t, err)
	long[len(long)-3000] ^= 1
	write(t, filepath.Join(in, "c-tampered-late.bin"), long)

	var last int
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 3, Progress: func(done, total int, _ int64) {
		require.Equal(t, 13, total)
		last = max(last, done)
	}})
	require.NoError(t, err)
	require.Equal(t, 13, last)
	require.Equal(t, 13, rep.Total)
	require.Equal(t, 10, rep.Decrypted)
	codes := map[string]string{}
	for _, f := range rep.Failures {
		codes[f.File] = f.Code
	}
	require.Equal(t, map[string]string{
		"a-not-mine.bin": "key_not_found", "b-garbage.bin": "unsupported_format", "c-tampered-late.bin": "stream_aborted",
	}, codes)
	for rel, clear := range want {
		got, err := os.ReadFile(filepath.Join(out, rel))
		require.NoError(t, err, rel)
		require.True(t, bytes.Equal(clear, got), rel)
	}
	for _, rel := range []string{"a-not-mine.bin", "b-garbage.bin", "c-tampered-late.bin"} {
		_, err := os.Stat(filepath.Join(out, rel))
		require.True(t, os.IsNotExist(err), "a failed file leaves no output: %s", rel)
		_, err = os.Stat(filepath.Join(out, rel+outfiles.PartSuffix))
		require.True(t, os.IsNotExist(err), "nor a temporary file: %s", rel)
	}

	// A second run skips what is done and reports the same failures.
	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 10, rep.Skipped)
	require.Equal(t, 0, rep.Decrypted)
	require.Len(t, rep.Failures, 3)

	// Once the creator's identity is imported, a rerun completes that file.
	_, err = c.Import(context.Background(), []exitclient.Identity{{Value: stranger, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{})
	require.NoError(t, err)
	require.Equal(t, 1, rep.Decrypted)
	got, err := os.ReadFile(filepath.Join(out, "a-not-mine.bin"))
	require.NoError(t, err)
	require.Equal(t, "not yours", string(got))

	_, err = tree.Decrypt(context.Background(), c, in, filepath.Join(in, "inside"), tree.Options{})
	require.Error(t, err, "output inside the input is refused")
	raw, _ := json.Marshal(rep)
	require.NotContains(t, string(raw), token)
}
