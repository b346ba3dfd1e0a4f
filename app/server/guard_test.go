package server

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
)

// serveTCP serves a test server as `idvault serve` does (Server.Serve) on a loopback port.
func serveTCP(t *testing.T, cfg config.Server) string {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	s := New(Deps{Server: cfg, Logger: slog.New(slog.DiscardHandler), Registry: NewRegistry()})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = s.Serve(ln) }()
	t.Cleanup(func() {
		_ = s.App.ShutdownWithTimeout(5 * time.Second)
		s.Close()
	})
	return ln.Addr().String()
}

// rawExchange sends req on a new connection and returns what the server sent until it closed
// the connection, and whether it did (within 10 s).
func rawExchange(t *testing.T, addr, req string) (string, bool) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err = io.WriteString(c, req)
	require.NoError(t, err)
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return string(got), false
	}
	return string(got), true
}

// Ambiguous framing gets 400 malformed_request and a closed connection, before routing (the
// POST to a GET route would otherwise be answered 405).
func TestServeRefusesAmbiguousFraming(t *testing.T) {
	t.Parallel()
	addr := serveTCP(t, config.Default().Server)
	for name, req := range map[string]string{
		"content-length and transfer-encoding": "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n" +
			"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"transfer-encoding then content-length": "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n" +
			"Content-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"foreign host first":  "GET /healthz HTTP/1.1\r\nHost: attacker.example\r\nHost: 127.0.0.1\r\n\r\n",
		"foreign host second": "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: attacker.example\r\n\r\n",
		"two content-lengths": "POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
	} {
		t.Run(name, func(t *testing.T) {
			got, closed := rawExchange(t, addr, req)
			require.True(t, closed, "the connection is closed after the answer: %q", got)
			require.True(t, strings.HasPrefix(got, "HTTP/1.1 400"), "answer: %q", got)
			require.Contains(t, got, `"code":"malformed_request"`)
		})
	}
	// One Host, one length: answered, and the connection kept for the next request.
	got, closed := rawExchange(t, addr, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"+
		"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
	require.True(t, closed)
	require.Equal(t, 2, strings.Count(got, "HTTP/1.1 200"), "answer: %q", got)
}

// A client trickling header lines is dropped once server.read_timeout has gone by in total.
func TestServeDropsSlowHeaders(t *testing.T) {
	t.Parallel()
	cfg := config.Default().Server
	cfg.ReadTimeout = 300 * time.Millisecond
	addr := serveTCP(t, cfg)
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	require.NoError(t, err)
	for i := range 20 { // one line every 100 ms: 2 s if never dropped
		if _, err := fmt.Fprintf(c, "X-Slow-%d: x\r\n", i); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection is still open after its headers took 2 s: %q", got)
	}
}

// A connection that sends nothing (an HTTP client's spare one) is closed at server.read_timeout
// without an answer, which the client would read as an unsolicited response; one that started
// a request gets its 4xx.
func TestServeClosesSpareConnectionsSilently(t *testing.T) {
	t.Parallel()
	cfg := config.Default().Server
	cfg.ReadTimeout = 300 * time.Millisecond
	addr := serveTCP(t, cfg)
	got, closed := rawExchange(t, addr, "")
	require.True(t, closed, "a silent connection is closed at read_timeout")
	require.Empty(t, got, "a connection that sent nothing gets no answer")
	got, closed = rawExchange(t, addr, "GET /healthz HTTP/1.1\r\n")
	require.True(t, closed)
	require.True(t, strings.HasPrefix(got, "HTTP/1.1 4"), "a started request gets its answer: %q", got)
}

// keptConnection dials addr and has 20 requests answered on the connection (the deadlines the
// server asks for on each are left to stand on the socket, see netguard.Conn).
func keptConnection(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	br := bufio.NewReader(c)
	for range 20 {
		_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
		require.NoError(t, err)
		resp, err := http.ReadResponse(br, nil)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	return c, br
}

// closedWithin10s reports whether the server closed c (within 10 s).
func closedWithin10s(t *testing.T, c net.Conn, br *bufio.Reader) bool {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(10*time.Second)))
	_, err := io.ReadAll(br)
	ne, ok := err.(net.Error)
	return !ok || !ne.Timeout()
}

// On a kept connection too, a request whose headers trickle is dropped at server.read_timeout,
// long before server.idle_timeout.
func TestServeDropsSlowHeadersOnAKeptConnection(t *testing.T) {
	t.Parallel()
	cfg := config.Default().Server
	cfg.ReadTimeout, cfg.IdleTimeout = 300*time.Millisecond, time.Hour
	addr := serveTCP(t, cfg)
	c, br := keptConnection(t, addr)
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	require.NoError(t, err)
	for i := range 20 { // one line every 100 ms: 2 s if never dropped
		if _, err := fmt.Fprintf(c, "X-Slow-%d: x\r\n", i); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	require.True(t, closedWithin10s(t, c, br), "the connection is still open after its headers took 2 s")
}

// A kept connection that sends no new request is closed at server.idle_timeout, even with a
// read_timeout far longer.
func TestServeClosesIdleKeptConnections(t *testing.T) {
	t.Parallel()
	cfg := config.Default().Server
	cfg.ReadTimeout, cfg.IdleTimeout = time.Hour, 300*time.Millisecond
	addr := serveTCP(t, cfg)
	c, br := keptConnection(t, addr)
	require.True(t, closedWithin10s(t, c, br), "an idle kept connection is still open after 10 s")
}
