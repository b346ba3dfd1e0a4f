// Package exitpgtest holds the helpers of the exit server's tests over a real PostgreSQL
// (app/exitserver/exitpg) that app/e2e's runs of the real binary share: a generated dump loaded
// into a fresh database, an exit server over it, the dump's identities.
package exitpgtest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// Token is the exit servers' token.
const Token = "exitpg-test-token-0123456789"

// Loaded is a generated dump (in Dir) in a fresh database (DSN).
type Loaded struct {
	Dir      string
	DSN      string
	AppID    []byte
	Manifest []dump.ManifestEntry
}

// LoadDump generates a dump with opts and loads it into a fresh database.
func LoadDump(t testing.TB, opts gen.Options) *Loaded {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	l := &Loaded{Dir: t.TempDir(), DSN: pgtest.NewDB(t)}
	sum, err := gen.Generate(ctx, l.Dir, opts)
	require.NoError(t, err)
	l.AppID = sum.AppID
	_, err = dump.Load(ctx, l.DSN, l.Dir, nil)
	require.NoError(t, err)
	l.Manifest, err = dump.ReadManifest(l.Dir)
	require.NoError(t, err)
	return l
}

// ServedWithIdentities loads a dump generated with opts, serves it (keyCache: the key cache's
// size, 0 for the default) and imports every identity of the dump through the server.
func ServedWithIdentities(t testing.TB, opts gen.Options, keyCache int) (*Loaded, *Instance) {
	t.Helper()
	l := LoadDump(t, opts)
	in := Serve(t, l, keyCache)
	_, err := in.Client.Import(context.Background(), Identities(t, l.Dir), exitclient.ImportOptions{})
	require.NoError(t, err)
	return l, in
}

// Instance is one exit server over the dump's database.
type Instance struct {
	URL    string
	Client *exitclient.Client
	HTTP   *http.Client
}

// Serve starts an exit server in-process over l's database (keyCache: the key cache's size, 0
// for the default).
func Serve(t testing.TB, l *Loaded, keyCache int) *Instance {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := exitdb.Open(ctx, exitdb.Config{DSN: l.DSN, AppID: l.AppID, KeyCacheSize: keyCache})
	require.NoError(t, err)
	t.Cleanup(db.Close)
	srv := exitserver.New(db, exitserver.Config{Token: Token})
	url, hc := apptest.ServeServer(t, srv)
	c := exitclient.New(url, Token)
	if _, bench := t.(*testing.B); !bench {
		// Tests check every answer against exit.json; benchmarks measure the server alone.
		hc.Transport = apptest.CheckTransport(hc.Transport, apptest.LoadExitAPIDoc)
		c.HTTP.Transport = apptest.CheckTransport(c.HTTP.Transport, apptest.LoadExitAPIDoc)
	}
	c.Backoff = 20 * time.Millisecond
	return &Instance{URL: url, Client: c, HTTP: hc}
}

// Identities reads the dump's identities.jsonl as the exit client imports it.
func Identities(t testing.TB, dir string) []exitclient.Identity {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, dump.IdentitiesFile))
	require.NoError(t, err)
	defer f.Close()
	ids, err := exitclient.ReadIdentities(f)
	require.NoError(t, err)
	return ids
}

// Decrypt posts a file and returns the status, the SHA-256 of a 200 body (hex) or the error
// code of an error body.
func (in *Instance) Decrypt(t testing.TB, path string) (int, string) {
	t.Helper()
	status, got, _ := in.DecryptMsg(t, path)
	return status, got
}

// DecryptMsg is Decrypt that also returns the message of an error body.
func (in *Instance) DecryptMsg(t testing.TB, path string) (int, string, string) {
	t.Helper()
	status, got, msg, err := in.TryDecrypt(path)
	require.NoError(t, err)
	return status, got, msg
}

// TryDecrypt is DecryptMsg for goroutines other than the test's: it returns its errors.
func (in *Instance) TryDecrypt(path string) (int, string, string, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, "", "", err
	}
	defer f.Close()
	req, err := http.NewRequest("POST", in.URL+"/v1/decrypt", f)
	if err != nil {
		return 0, "", "", err
	}
	req.Header.Set("Authorization", "Bearer "+Token)
	resp, err := in.HTTP.Do(req)
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
