package exitclient_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/tree"
	"github.com/idvault/idvault/app/exitserver"
)

func TestProbe(t *testing.T) {
	t.Parallel()
	db, c := server(t, exitserver.Config{})
	require.NoError(t, c.Probe(context.Background()))

	for name, url := range map[string]string{
		"no scheme":                  strings.TrimPrefix(c.URL, "http://"),
		"host no scheme":             "localhost:8000",
		"bad URL":                    "http://[::1",
		"other scheme":               "ftp://127.0.0.1:8000",
		"not a URL":                  "exit server",
		"control in URL":             "http://127.0.0.1:8000/\x1b[31m",
		"bad URL with a password":    "http://u:url-secret-1@[::1",
		"bad scheme with a password": "ht!tp://u:url-secret-2@127.0.0.1:8000",
	} {
		bad := exitclient.New(url, token)
		err := bad.Probe(context.Background())
		var cfg *exitclient.ConfigError
		require.ErrorAs(t, err, &cfg, name)
		require.NotContains(t, err.Error(), "\x1b", "the URL is quoted: %s", name)
		require.NotContains(t, err.Error(), "url-secret", "the password is not shown: %s", name)
	}

	wrong := exitclient.New(c.URL, "wrong-token-0123456789")
	err := wrong.Probe(context.Background())
	var cfg *exitclient.ConfigError
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), "refused the token")
	require.NotContains(t, err.Error(), "wrong-token-0123456789")

	// Something that is not an exit server.
	other := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(other.Close)
	err = exitclient.New(other.URL, token).Probe(context.Background())
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), "does not look like an exit server")

	// A server that does not answer for the URL's host name.
	_, strict := server(t, exitserver.Config{AllowedHosts: []string{"exit.example"}})
	err = strict.Probe(context.Background())
	require.ErrorAs(t, err, &cfg)
	require.Contains(t, err.Error(), "refused the host name")

	// A database that comes up within the budget is waited for.
	db.SetDown(true)
	go func() {
		time.Sleep(100 * time.Millisecond)
		db.SetDown(false)
	}()
	require.NoError(t, c.Probe(context.Background()))
}

// A server that dies mid-run stops the whole run once, after the shared retry budget, with one
// error naming it: no file is reported as failed for it, and no part file stays.
func TestDeadServerStopsTheRunOnce(t *testing.T) {
	t.Parallel()
	srv := apptest.DyingExit(t, 5)
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "clear")
	for i := range 60 {
		write(t, filepath.Join(in, fmt.Sprintf("f%02d", i)), random(1000))
	}
	c := exitclient.New(srv.URL, token)
	c.Backoff, c.Budget = 5*time.Millisecond, exitclient.NewRetryBudget(300*time.Millisecond)

	type result struct {
		rep tree.Report
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 3})
		done <- result{rep, err}
	}()
	var res result
	select {
	case res = <-done:
	case <-time.After(time.Minute):
		t.Fatal("a dead server did not stop the run within a minute")
	}
	var unav *exitclient.UnavailableError
	require.ErrorAs(t, res.err, &unav)
	require.Equal(t, "server_unavailable", exitclient.Code(res.err))
	require.Contains(t, res.err.Error(), srv.URL)
	require.Empty(t, res.rep.Failures, "no file fails for the server's sake")
	require.Equal(t, 60, res.rep.Total)
	require.GreaterOrEqual(t, res.rep.Decrypted, 3)
	require.Less(t, res.rep.Decrypted, 60)
	parts, _ := filepath.Glob(filepath.Join(out, "*"+outfiles.PartSuffix))
	require.Empty(t, parts)

	// Dead from the start: the probe gives up after the budget, naming the URL, and no output
	// directory is created.
	dead := exitclient.New(srv.URL, token)
	dead.Backoff, dead.Budget = 5*time.Millisecond, exitclient.NewRetryBudget(200*time.Millisecond)
	fresh := filepath.Join(t.TempDir(), "fresh")
	_, err := tree.Decrypt(context.Background(), dead, in, fresh, tree.Options{})
	require.ErrorAs(t, err, &unav)
	require.NoDirExists(t, fresh)
}

// One file the server keeps failing while others succeed fails alone after its attempts; the
// run goes on.
func TestOneFailingFileDoesNotStopTheRun(t *testing.T) {
	t.Parallel()
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		if string(b) == "poison" {
			http.Error(w, "boom", http.StatusInternalServerError)
			return
		}
		_, _ = w.Write(b)
	}, nil)
	in, out := t.TempDir(), t.TempDir()
	write(t, filepath.Join(in, "poison"), []byte("poison"))
	for i := range 20 {
		write(t, filepath.Join(in, fmt.Sprintf("f%02d", i)), random(100))
	}
	c := exitclient.New(srv.URL, token)
	c.Attempts, c.Backoff, c.Budget = 3, 5*time.Millisecond, exitclient.NewRetryBudget(time.Minute)
	rep, err := tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 2})
	require.NoError(t, err)
	require.Equal(t, 20, rep.Decrypted)
	require.Len(t, rep.Failures, 1)
	require.Equal(t, "http_500", rep.Failures[0].Code)
}

// Ctrl-C (ctx ending) mid-stream: the run returns the context's error, files done stay, the
// file in flight leaves no part file and is not reported as failed.
func TestDecryptInterruptedLeavesNoPart(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv := apptest.HangingDecrypt(t, 2)
	in, out := t.TempDir(), t.TempDir()
	for i := range 5 {
		write(t, filepath.Join(in, fmt.Sprintf("f%d", i)), random(100))
	}
	c := exitclient.New(srv.URL, token)
	go apptest.CancelWhenPart(out, srv.Hung, cancel) // once the part file of the third is being written
	rep, err := tree.Decrypt(ctx, c, in, out, tree.Options{Jobs: 1})
	require.True(t, errors.Is(err, context.Canceled), "%v", err)
	require.Equal(t, 2, rep.Decrypted)
	require.Empty(t, rep.Failures)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, entries, 2, "the two clear files, no part file")
}

// A server that hangs (accepts, then never answers: stopped, or behind a silent network) is
// abandoned once no byte moved for Client.Idle, and the run stops through the budget; a stream
// that hangs midway fails its file as cut.
func TestHungServerStopsTheRun(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	srv := apptest.StandInExit(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch k := n.Add(1); {
		case k <= 3:
			_, _ = w.Write([]byte("clear"))
			return
		case k == 4:
			_, _ = w.Write(make([]byte, 1000))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}, nil)
	in, out := t.TempDir(), t.TempDir()
	for i := range 20 {
		write(t, filepath.Join(in, fmt.Sprintf("f%02d", i)), random(100))
	}
	c := exitclient.New(srv.URL, token)
	c.Idle, c.Backoff, c.Budget = 200*time.Millisecond, 5*time.Millisecond, exitclient.NewRetryBudget(300*time.Millisecond)
	done := make(chan error, 1)
	var rep tree.Report
	go func() {
		var err error
		rep, err = tree.Decrypt(context.Background(), c, in, out, tree.Options{Jobs: 1})
		done <- err
	}()
	select {
	case err := <-done:
		var unav *exitclient.UnavailableError
		require.ErrorAs(t, err, &unav)
		require.Contains(t, err.Error(), "no byte moved for 200ms")
	case <-time.After(time.Minute):
		t.Fatal("a hung server did not stop the run within a minute")
	}
	require.Equal(t, 3, rep.Decrypted)
	require.Len(t, rep.Failures, 1)
	require.Equal(t, "stream_aborted", rep.Failures[0].Code)
	require.Contains(t, rep.Failures[0].Message, "no byte moved")
	parts, _ := filepath.Glob(filepath.Join(out, "*"+outfiles.PartSuffix))
	require.Empty(t, parts)
}

// The retry budget bounds the time a run spends retrying: a request waiting to retry stops
// when the outage reaches the budget, not after its backoff (up to 10 s, here an hour). Before,
// `--retry-budget 3s` against a dead server stopped the run after about 6 s.
func TestRetryBudgetCutsTheBackoffShort(t *testing.T) {
	t.Parallel()
	unavailable := func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error": {"code": "database_unavailable"}}`, http.StatusServiceUnavailable)
	}
	cutShort := func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		fmt.Fprint(buf, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"imp")
		_ = buf.Flush()
		conn.Close()
	}
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close() // connections refused from the start: the probe waits
	for name, tc := range map[string]struct {
		url func() string
	}{
		"a 503 answer":        {},
		"an answer cut short": {},
		"no server":           {url: func() string { return dead.URL }},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			h := unavailable
			if name == "an answer cut short" {
				h = cutShort
			}
			srv := apptest.StandInExit(t, nil, func(w http.ResponseWriter, r *http.Request) { calls.Add(1); h(w, r) })
			url := srv.URL
			if tc.url != nil {
				url = tc.url()
			}
			c := exitclient.New(url, token)
			c.Backoff, c.Budget = time.Hour, exitclient.NewRetryBudget(100*time.Millisecond)
			done := make(chan error, 1)
			go func() {
				_, err := c.Import(context.Background(), []exitclient.Identity{{Value: "ID-A", Line: 1}}, exitclient.ImportOptions{})
				done <- err
			}()
			var err error
			select {
			case err = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the run waited out its backoff past the retry budget")
			}
			var unav *exitclient.UnavailableError
			require.ErrorAs(t, err, &unav)
			require.Contains(t, err.Error(), url)
			if tc.url == nil {
				require.Equal(t, int32(1), calls.Load(), "no attempt after the budget")
			}
		})
	}
}
