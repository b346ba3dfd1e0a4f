package exitclient_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/audit"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/exit/encryption"
)

// cutFirstAnswer puts a proxy in front of the server c talks to: the first request to route
// gets its 200 headers and a few bytes of its answer, then the connection closes, as when the
// exit server is killed while it sends an answer; every other request goes through. It returns
// a client of the proxy and the count of requests to route.
func cutFirstAnswer(t *testing.T, c *exitclient.Client, route string) (*exitclient.Client, *atomic.Int32) {
	return cutAnswers(t, c, route, 1)
}

// cutAnswers is cutFirstAnswer for the first n requests to route.
func cutAnswers(t *testing.T, c *exitclient.Client, route string, n int32) (*exitclient.Client, *atomic.Int32) {
	t.Helper()
	target, err := url.Parse(c.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != route || calls.Add(1) > n {
			fullDuplex(w)
			proxy.ServeHTTP(w, r)
			return
		}
		_, _ = io.Copy(io.Discard, r.Body)
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: 4096\r\n\r\n\x00\x05clear")
		_ = buf.Flush()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	cut := exitclient.New(srv.URL, c.Token)
	cut.Backoff = c.Backoff
	return cut, &calls
}

// fullDuplex lets a proxy handler send the answer's headers while it still forwards the
// request's body, as the exit server's decrypt stream does: without it net/http closes a request
// body with over 256 KiB unread when the answer starts (golang/go#15527), the proxy's transport
// drops the upstream connection, and the answer comes cut ("use of closed network connection")
// whenever the server answered before the proxy had forwarded all but 256 KiB of the body.
func fullDuplex(w http.ResponseWriter) {
	_ = http.NewResponseController(w).EnableFullDuplex()
}

// An answer of POST /v1/decrypt-batch cut short by a server killed and restarted is sent
// again under the retry budget, instead of stopping a run of millions of records, which
// decrypt-records cannot resume, at the first crash.
func TestDecryptRecordsRetriesACutAnswer(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	c, calls := cutFirstAnswer(t, f.c, "/v1/decrypt-batch")
	var in, want strings.Builder
	in.WriteString("v\n")
	want.WriteString("v\n")
	for i := range 3 {
		fmt.Fprintf(&in, "%s\n", f.b64(t, fmt.Sprint("clear ", i)))
		fmt.Fprintf(&want, "clear %d\n", i)
	}
	var out strings.Builder
	rep, err := records.Decrypt(context.Background(), c, strings.NewReader(in.String()), &out,
		records.Options{Format: records.FormatCSV, Fields: []string{"v"}})
	require.NoError(t, err)
	require.Equal(t, want.String(), out.String())
	require.Equal(t, int64(3), rep.Decrypted)
	require.Equal(t, int32(2), calls.Load(), "the batch was sent again once")
}

// The audit's answers likewise: one cut short is asked again.
func TestAuditRetriesACutAnswer(t *testing.T) {
	t.Parallel()
	db, direct := server(t, exitserver.Config{})
	who, _ := db.AddUser()
	_, err := direct.Import(context.Background(), []exitclient.Identity{{Value: who, Line: 1}}, exitclient.ImportOptions{})
	require.NoError(t, err)
	ct, err := db.Encrypt(who, encryption.V10, []byte("clear"), encryption.EncryptOptions{})
	require.NoError(t, err)
	in := t.TempDir()
	write(t, in+"/a.bin", ct)
	c, calls := cutFirstAnswer(t, direct, "/v1/audit")
	rep, _ := auditTree(t, c, in, audit.Options{})
	require.Equal(t, int64(1), rep.Summary.Reachable)
	require.Equal(t, int32(2), calls.Load())
}

// A value too big for a batch (sent alone to POST /v1/decrypt) whose answer is cut midway is
// asked for once more: after a server crash it decrypts; a stream cut again (as the server
// cuts one with a bad chunk) keeps its ciphertext as stream_aborted, after two requests.
func TestDecryptRecordsBigValueCutAnswer(t *testing.T) {
	t.Parallel()
	f := newRecordsFixture(t)
	big := strings.Repeat("b", 1<<20)
	in := "v\n" + base64.StdEncoding.EncodeToString(f.enc(t, f.who, encryption.V8, big)) + "\n"
	for _, tc := range []struct {
		cuts  int32
		calls int32
		code  string
	}{{1, 2, ""}, {2, 2, "stream_aborted"}} {
		c, calls := cutAnswers(t, f.c, "/v1/decrypt", tc.cuts)
		var out strings.Builder
		var errs []records.FieldError
		_, err := records.Decrypt(context.Background(), c, strings.NewReader(in), &out, records.Options{
			Format: records.FormatCSV, Fields: []string{"v"},
			Errors: func(fe records.FieldError) error { errs = append(errs, fe); return nil }})
		require.NoError(t, err)
		require.Equal(t, tc.calls, calls.Load())
		if tc.code == "" {
			require.Empty(t, errs)
			require.Equal(t, "v\n"+big+"\n", out.String())
		} else {
			require.Len(t, errs, 1)
			require.Equal(t, tc.code, errs[0].Code)
			require.Equal(t, in, out.String(), "the value keeps its ciphertext")
		}
	}
}

// An answer of PUT /v1/identities cut midway after the server imported the batch (killed
// while it answered) is sent again under the retry budget instead of stopping the import with
// "unexpected EOF": importing is idempotent, so the batch sent twice is counted as already
// imported the second time, and every identity ends up imported once.
func TestImportRetriesACutAnswer(t *testing.T) {
	t.Parallel()
	db, direct := server(t, exitserver.Config{})
	target, err := url.Parse(direct.URL)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/identities" || calls.Add(1) > 1 {
			fullDuplex(w)
			proxy.ServeHTTP(w, r)
			return
		}
		served := httptest.NewRecorder()
		proxy.ServeHTTP(served, r) // the server imports the batch...
		if served.Code != http.StatusCreated {
			t.Errorf("the server answered the batch %d", served.Code)
		}
		conn, buf, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		// ... and dies while it answers.
		fmt.Fprintf(buf, "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"impor", served.Body.Len())
		_ = buf.Flush()
		conn.Close()
	}))
	t.Cleanup(srv.Close)
	c := exitclient.New(srv.URL, token)
	c.Backoff = direct.Backoff
	var ids []exitclient.Identity
	for i := range 5 {
		id, _ := db.AddUser()
		ids = append(ids, exitclient.Identity{Value: id, Line: i + 1})
	}
	sum, err := c.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 2, Parallel: 1})
	require.NoError(t, err)
	require.Equal(t, exitclient.ImportSummary{Total: 5, Imported: 3, AlreadyImported: 2}, sum)
	require.Equal(t, int32(4), calls.Load(), "the first batch was sent again once")
	for _, id := range ids {
		require.True(t, db.IsImported(id.Value))
	}
}
