package httpguard_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/httpguard"
)

// serveHeads serves, behind Heads, a handler that answers each request's method, path and
// body; refused heads are answered "refused <kind> <reason>".
func serveHeads(t *testing.T, timeout time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			fmt.Fprintf(w, "%s %s %q", r.Method, r.URL.Path, body)
		}),
		ReadHeaderTimeout: timeout,
		ConnContext:       httpguard.ConnContext,
	}
	refuse := func(w io.Writer, p httpguard.HeadProblem) {
		body := fmt.Sprintf("refused %d %s", p.Kind, p.Reason)
		fmt.Fprintf(w, "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	}
	go func() {
		_ = srv.Serve(httpguard.Heads(ln, httpguard.HeadConfig{MaxBytes: 1024, Timeout: timeout, Refuse: refuse}))
	}()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// exchange writes raw on a new connection, then reads the answers until the server closes it
// (or 10 s, a bound for a broken test).
func exchange(t *testing.T, addr, raw string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(c, raw)
	require.NoError(t, err)
	got, _ := io.ReadAll(c)
	return string(got)
}

// answers reads the bodies of the answers in raw.
func answers(t *testing.T, raw string) []string {
	t.Helper()
	var out []string
	br := bufio.NewReader(strings.NewReader(raw))
	for {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			return out
		}
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		out = append(out, string(body))
	}
}

// Requests sent back to back on one connection are each read whole, whatever their body's
// framing, and a request carried inside a body is body, not a request.
func TestHeadsFollowBodies(t *testing.T) {
	t.Parallel()
	addr := serveHeads(t, 5*time.Second)
	smuggled := "GET /smuggled HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n"
	raw := "POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" +
		"POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
		fmt.Sprintf("%x\r\n%s\r\n3;ext\r\nabc\r\n0\r\nX-Trailer: 1\r\n\r\n", len(smuggled), smuggled) +
		"\r\nGET /c HTTP/1.1\r\nHost: x\r\n\r\n" +
		"POST /d HTTP/1.1\r\nHost: x\r\nContent-Length: " + fmt.Sprint(len(smuggled)) + "\r\nConnection: close\r\n\r\n" + smuggled
	got := answers(t, exchange(t, addr, raw))
	require.Equal(t, []string{
		`POST /a "hello"`,
		fmt.Sprintf("POST /b %q", smuggled+"abc"),
		`GET /c ""`,
		fmt.Sprintf("POST /d %q", smuggled),
	}, got)
}

// Heads net/http would misread or answer in its own words are refused with the caller's
// answer, and the connection is closed after it.
func TestHeadsRefuse(t *testing.T) {
	t.Parallel()
	addr := serveHeads(t, 5*time.Second)
	for name, tc := range map[string]struct{ raw, want string }{
		"too large":              {"GET / HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("p", 2000) + "\r\n\r\n", "refused 0 "},
		"length and chunked":     {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "refused 2 the request has both Content-Length and Transfer-Encoding"},
		"two hosts":              {"GET / HTTP/1.1\r\nHost: x\r\nhost: y\r\n\r\n", "refused 2 the request has more than one Host header"},
		"two equal lengths":      {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\na", "refused 2 the request has more than one Content-Length header"},
		"not a length":           {"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: +1\r\n\r\na", "refused 2 the request's Content-Length is not a number"},
		"not chunked":            {"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", "refused 2 the request's Transfer-Encoding is not chunked"},
		"second request refused": {"GET /ok HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "refused 2 the request has more than one Host header"},
	} {
		got := answers(t, exchange(t, addr, tc.raw))
		require.NotEmpty(t, got, name)
		require.True(t, strings.HasPrefix(got[len(got)-1], tc.want), "%s: %q", name, got)
	}
}

// A head that started and did not end in time is refused; a connection that sent nothing is
// closed without an answer.
func TestHeadsTimeOut(t *testing.T) {
	t.Parallel()
	addr := serveHeads(t, 300*time.Millisecond)
	require.True(t, strings.HasPrefix(strings.Join(answers(t, exchange(t, addr, "GET / HTTP/1.1\r\nHost: x\r\n")), ""), "refused 1"))
	require.Empty(t, exchange(t, addr, ""))
}

// After WaitNextWithin, the connection waits that long for its next request, not the server's
// idle timeout.
func TestWaitNextWithin(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			httpguard.WaitNextWithin(r.Context(), 200*time.Millisecond)
		}),
		IdleTimeout: time.Hour,
		ConnContext: httpguard.ConnContext,
	}
	go func() { _ = srv.Serve(httpguard.Heads(ln, httpguard.HeadConfig{Timeout: time.Hour})) }()
	t.Cleanup(func() { _ = srv.Shutdown(context.Background()) })
	got := exchange(t, ln.Addr().String(), "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	require.Len(t, answers(t, got), 1, "answered, then closed when its next request did not come")
}
