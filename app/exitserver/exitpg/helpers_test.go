package exitpg_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/exitdb"
	"github.com/idvault/idvault/exit/pgtest"
)

const token = "exitpg-test-token-0123456789"

// loaded is a generated dump in a fresh database.
type loaded struct {
	dir      string
	dsn      string
	appID    []byte
	manifest []dump.ManifestEntry
}

func loadDump(t testing.TB, opts gen.Options) *loaded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l := &loaded{dir: t.TempDir(), dsn: pgtest.NewDB(t)}
	sum, err := gen.Generate(ctx, l.dir, opts)
	require.NoError(t, err)
	l.appID = sum.AppID
	_, err = dump.Load(ctx, l.dsn, l.dir, nil)
	require.NoError(t, err)
	l.manifest, err = dump.ReadManifest(l.dir)
	require.NoError(t, err)
	return l
}

// servedWithIdentities loads a dump generated with opts, serves it (keyCache: the key cache's
// size, 0 for the default) and imports every identity of the dump through the server.
func servedWithIdentities(t testing.TB, opts gen.Options, keyCache int) (*loaded, *instance) {
	t.Helper()
	l := loadDump(t, opts)
	in := serve(t, l, keyCache)
	_, err := in.client.Import(context.Background(), identities(t, l.dir), exitclient.ImportOptions{})
	require.NoError(t, err)
	return l, in
}

// instance is one exit server over the dump's database.
type instance struct {
	url    string
	client *exitclient.Client
	http   *http.Client
}

func serve(t testing.TB, l *loaded, keyCache int) *instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := exitdb.Open(ctx, exitdb.Config{DSN: l.dsn, AppID: l.appID, KeyCacheSize: keyCache})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	srv := exitserver.New(db, exitserver.Config{Token: token})
	url, hc := apptest.ServeServer(t, srv)
	c := exitclient.New(url, token)
	if _, bench := t.(*testing.B); !bench {
		// Tests check every answer against exit.json; benchmarks measure the server alone.
		hc.Transport = apptest.CheckTransport(hc.Transport, apptest.LoadExitAPIDoc)
		c.HTTP.Transport = apptest.CheckTransport(c.HTTP.Transport, apptest.LoadExitAPIDoc)
	}
	c.Backoff = 20 * time.Millisecond
	return &instance{url: url, client: c, http: hc}
}

// startExitBinary runs the real `idvault exit` over the dump's database, listening at url
// (http://127.0.0.1:PORT), and waits until it answers: the process whose memory the
// benchmarks read.
func startExitBinary(t testing.TB, l *loaded, url string) *apptest.Proc {
	t.Helper()
	return apptest.StartBinary(t, "", []string{"IDVAULT_EXIT__TOKEN=" + token}, url, "exit", "--db", l.dsn,
		"--app-id", base64.StdEncoding.EncodeToString(l.appID), "--listen", strings.TrimPrefix(url, "http://"), "--log-level", "warn")
}

// identities reads the dump's identities.jsonl as the exit client imports it.
func identities(t testing.TB, dir string) []exitclient.Identity {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, dump.IdentitiesFile))
	require.NoError(t, err)
	defer f.Close()
	ids, err := exitclient.ReadIdentities(f)
	require.NoError(t, err)
	return ids
}

// decrypt posts a file and returns the status, the SHA-256 of a 200 body (hex) or the error
// code of an error body.
func (in *instance) decrypt(t testing.TB, path string) (int, string) {
	status, got, _ := in.decryptMsg(t, path)
	return status, got
}

// decryptMsg is decrypt that also returns the message of an error body.
func (in *instance) decryptMsg(t testing.TB, path string) (int, string, string) {
	t.Helper()
	status, got, msg, err := in.tryDecrypt(path)
	require.NoError(t, err)
	return status, got, msg
}

// tryDecrypt is decryptMsg for goroutines other than the test's: it returns its errors.
func (in *instance) tryDecrypt(path string) (int, string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", "", err
	}
	defer f.Close()
	req, err := http.NewRequest("POST", in.url+"/v1/decrypt", f)
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := in.http.Do(req)
	if err != nil {
		return 0, "", "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		var body struct {
			Error struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			return 0, "", "", err
		}
		return resp.StatusCode, body.Error.Code, body.Error.Message, nil
	}
	h := sha256.New()
	if _, err := io.Copy(h, resp.Body); err != nil {
		return -1, "stream_aborted", "", nil
	}
	return 200, hex.EncodeToString(h.Sum(nil)), "", nil
}
