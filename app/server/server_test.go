package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apierr/fibererr"
	"github.com/idvault/idvault/app/config"
)

func newTestServer(t *testing.T, checks map[string]Checker, warnings ...string) (*Server, *bytes.Buffer) {
	t.Helper()
	logs := &bytes.Buffer{}
	cfg := config.Default().Server
	cfg.BodyLimit = 2048
	cfg.AllowedHosts = []string{"example.com", "127.0.0.1"} // httptest.NewRequest sends Host: example.com
	s := New(Deps{Server: cfg, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Registry: NewRegistry(), Checks: checks, Warnings: warnings})
	return s, logs
}

func do(t *testing.T, app *fiber.App, method, target string, body io.Reader) (*http.Response, string) {
	t.Helper()
	resp, err := app.Test(httptest.NewRequest(method, target, body), -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp, string(raw)
}

func TestHealthAndReadiness(t *testing.T) {
	t.Parallel()
	ok := CheckFunc(func(context.Context) error { return nil })
	s, _ := newTestServer(t, map[string]Checker{"store": ok}, "fake authentication is on")
	resp, body := do(t, s.App, http.MethodGet, "/healthz", nil)
	require.Equal(t, 200, resp.StatusCode)
	require.JSONEq(t, `{"status":"ok"}`, body)
	resp, body = do(t, s.App, http.MethodGet, "/readyz", nil)
	require.Equal(t, 200, resp.StatusCode)
	require.JSONEq(t, `{"status":"ready","checks":{"store":"ok"},"warnings":["fake authentication is on"]}`, body)

	failing := CheckFunc(func(context.Context) error {
		return causeError{cause: "connect refused", detail: "554 mx.internal.example says go away"}
	})
	plain := CheckFunc(func(context.Context) error { return errors.New("store: disk on fire") })
	s, logs := newTestServer(t, map[string]Checker{"store": plain, "smtp": failing})
	resp, body = do(t, s.App, http.MethodGet, "/readyz", nil)
	require.Equal(t, 503, resp.StatusCode)
	require.Contains(t, body, `"smtp":"failed: connect refused"`)
	require.Contains(t, body, `"store":"failed"`)
	require.Contains(t, body, `"status":"not_ready"`)
	require.NotContains(t, body, "mx.internal.example", "/readyz needs no auth: only a short cause")
	require.NotContains(t, body, "disk on fire")
	require.Eventually(t, func() bool { return strings.Contains(logs.String(), "mx.internal.example") }, 2*time.Second, 10*time.Millisecond,
		"the detail goes to the log")
}

type causeError struct{ cause, detail string }

func (e causeError) Error() string { return e.detail }
func (e causeError) Cause() string { return e.cause }

// A hanging check delays neither the server's construction nor /readyz: it shows "checking",
// then "failed: timeout" once its own bound expires; meanwhile the other checks report.
func TestHangingCheckDoesNotSlowReadiness(t *testing.T) {
	t.Parallel()
	ok := CheckFunc(func(context.Context) error { return nil })
	var returned atomic.Bool // the hanging check ends only with its timeout (checkTimeout)
	hang := CheckFunc(func(ctx context.Context) error { <-ctx.Done(); returned.Store(true); return ctx.Err() })
	s, _ := newTestServer(t, map[string]Checker{"store": ok, "smtp": hang})
	require.False(t, returned.Load(), "construction does not wait for checks")

	// While the check hangs, /readyz answers with what it knows: a /readyz that waited for the
	// check would have its timeout's answer instead of "checking".
	for i := 0; i < 3; i++ {
		resp, body := do(t, s.App, http.MethodGet, "/readyz", nil)
		require.Equal(t, 503, resp.StatusCode)
		require.Contains(t, body, `"smtp":"checking"`)
		require.Contains(t, body, `"store":"ok"`)
	}
	require.Eventually(t, func() bool {
		_, body := do(t, s.App, http.MethodGet, "/readyz", nil)
		return strings.Contains(body, `"smtp":"failed: timeout"`)
	}, checkTimeout+3*time.Second, 100*time.Millisecond)
}

func TestEveryResponseHasARequestID(t *testing.T) {
	t.Parallel()
	s, _ := newTestServer(t, nil)
	for _, path := range []string{"/healthz", "/nope", "/metrics"} {
		resp, _ := do(t, s.App, http.MethodGet, path, nil)
		require.NotEmpty(t, resp.Header.Get("X-Request-ID"), path)
	}
}

func TestJSONErrorsForUnknownRoutesMethodsPanicsAndBigBodies(t *testing.T) {
	t.Parallel()
	s, logs := newTestServer(t, nil)
	s.App.Get("/boom", func(*fiber.Ctx) error { panic("kaboom") })
	s.App.Post("/echo", func(c *fiber.Ctx) error { return c.Send(c.Body()) })
	s.App.Get("/fail", func(*fiber.Ctx) error { return errors.New("db exploded: secret detail") })
	cases := []struct {
		method, path string
		body         io.Reader
		status       int
		code         string
	}{
		{http.MethodGet, "/nope", nil, 404, "not_found"},
		{http.MethodDelete, "/healthz", nil, 405, "method_not_allowed"},
		{http.MethodGet, "/boom", nil, 500, "internal_error"},
		{http.MethodGet, "/fail", nil, 500, "internal_error"},
	}
	for _, c := range cases {
		resp, body := do(t, s.App, c.method, c.path, c.body)
		require.Equal(t, c.status, resp.StatusCode, c.path)
		require.Contains(t, resp.Header.Get("Content-Type"), "application/json", c.path)
		require.Contains(t, body, `"code":"`+c.code+`"`, c.path)
		require.Contains(t, body, `"trace_id":"`+resp.Header.Get("X-Request-ID")+`"`, c.path)
		require.NotContains(t, body, "secret detail")
		require.NotContains(t, body, "kaboom")
	}
	require.Contains(t, logs.String(), "kaboom", "the panic is logged")
	require.Contains(t, logs.String(), "db exploded", "the real error is logged")
}

func TestErrorStyles(t *testing.T) {
	t.Parallel()
	s, _ := newTestServer(t, nil)
	e := apierr.InvalidBody.Msg("field x missing")
	s.App.Get("/flat", fibererr.WithStyle(apierr.StyleFlat), func(*fiber.Ctx) error { return e })
	s.App.Get("/simple", fibererr.WithStyle(apierr.StyleSimple), func(*fiber.Ctx) error { return apierr.NoEmailProvided.New() })
	s.App.Get("/retry", func(*fiber.Ctx) error {
		return &apierr.Error{Code: apierr.MaxAttemptsReached, Message: "wait", RetryAfter: 1500 * 1e6}
	})
	_, body := do(t, s.App, http.MethodGet, "/flat", nil)
	require.JSONEq(t, `{"status":400,"code":"invalid_body","message":"field x missing"}`, body)
	_, body = do(t, s.App, http.MethodGet, "/simple", nil)
	require.JSONEq(t, `{"error":"no email provided","code":"no_email_provided"}`, body)
	resp, _ := do(t, s.App, http.MethodGet, "/retry", nil)
	require.Equal(t, "2", resp.Header.Get("Retry-After"), "rounded up to whole seconds")
}

func TestMetricsAndRequestLogs(t *testing.T) {
	t.Parallel()
	s, logs := newTestServer(t, nil)
	s.App.Get("/test/:id/thing", func(c *fiber.Ctx) error { return c.JSON(fiber.Map{}) })
	do(t, s.App, http.MethodGet, "/test/abc/thing?email=alice%40example.com", nil)
	do(t, s.App, http.MethodGet, "/nope?email=bob%40example.com", nil)
	_, body := do(t, s.App, http.MethodGet, "/metrics", nil)
	require.Contains(t, body, `idvault_http_requests_total{method="GET",route="/test/:id/thing",status="200"} 1`)
	require.Contains(t, body, `idvault_http_requests_total{method="GET",route="unmatched",status="404"} 1`)
	require.Contains(t, body, `idvault_http_request_duration_seconds_bucket{method="GET",route="/test/:id/thing",status="200",le=`)
	require.Contains(t, logs.String(), `"route":"/test/:id/thing"`)
	require.NotContains(t, logs.String(), "alice", "no query string in logs")
	require.NotContains(t, logs.String(), "bob")
}

// A body over server.body_limit gets a JSON 413 from a real listener.
func TestBodyLimitOnARealListener(t *testing.T) {
	t.Parallel()
	s, _ := newTestServer(t, nil)
	s.App.Post("/echo", func(c *fiber.Ctx) error { return c.Send(c.Body()) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = s.App.Listener(ln) }()
	t.Cleanup(func() { _ = s.App.Shutdown() })
	resp, err := http.Post("http://"+ln.Addr().String()+"/echo", "application/json", strings.NewReader(strings.Repeat("x", 4096)))
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	require.Contains(t, string(raw), `"code":"body_too_large"`)
	requireTraced(t, resp, string(raw))
}

// requireTraced checks that an error answer carries a request ID, and the same one as trace_id.
func requireTraced(t *testing.T, resp *http.Response, body string) {
	t.Helper()
	id := resp.Header.Get("X-Request-ID")
	require.NotEmpty(t, id, "X-Request-ID on %d", resp.StatusCode)
	require.Contains(t, body, `"trace_id":"`+id+`"`)
}

// Request lines and headers over the read buffer get a catalogue 431 with a request ID and
// trace_id, like every other error.
func TestHeaderTooLargeIsACatalogueError(t *testing.T) {
	t.Parallel()
	s, _ := newTestServer(t, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = s.App.Listener(ln) }()
	t.Cleanup(func() { _ = s.App.Shutdown() })
	// The request goes out in one write, as most clients send such a request: the server answers
	// and closes with part of it unread, which resets the connection, and a client still
	// writing (net/http writes the header in 4 KiB pieces) may see the reset before the answer.
	conn, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET /healthz?pad=" + strings.Repeat("x", ReadBufferSize(0, false)) + " HTTP/1.1\r\nHost: idvault\r\n\r\n"))
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	require.Equal(t, http.StatusRequestHeaderFieldsTooLarge, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	require.Contains(t, string(raw), `"code":"request_header_too_large"`)
	requireTraced(t, resp, string(raw))
}

// A client's X-Request-ID is kept only when short and made of safe characters.
func TestClientRequestIDKeptOnlyWhenSafe(t *testing.T) {
	t.Parallel()
	s, logs := newTestServer(t, nil)
	for id, kept := range map[string]bool{
		"abc-123_x.y:z":                        true,
		"0b5e3c1e-8a4e-4a57-9d7c-2d0f1f3f0a11": true,
		`evil"quote`:                           false,
		`back\slash`:                           false,
		"tab\there":                            false,
		"\x1b[31mred":                          false,
		"<script>":                             false,
		strings.Repeat("a", 3000):              false,
		strings.Repeat("b", 65):                false,
	} {
		req := httptest.NewRequest(http.MethodGet, "/nope", nil)
		req.Header.Set("X-Request-ID", id)
		resp, err := s.App.Test(req, -1)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got := resp.Header.Get("X-Request-ID")
		require.Contains(t, string(raw), `"trace_id":"`+got+`"`)
		if kept {
			require.Equal(t, id, got)
			continue
		}
		require.NotEqual(t, id, got, "%q replaced", id)
		require.Len(t, got, 36, "a fresh UUID")
		require.NotContains(t, logs.String(), id)
	}
}

// An unknown HTTP method gets the catalogue's JSON 405, not fiber's plain-text 400.
func TestUnknownMethodIsACatalogueError(t *testing.T) {
	t.Parallel()
	s, _ := newTestServer(t, nil)
	for _, method := range []string{"FOO", "PROPFIND", "get"} {
		resp, body := do(t, s.App, method, "/healthz", nil)
		require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode, method)
		require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
		require.Contains(t, body, `"code":"method_not_allowed"`)
		requireTraced(t, resp, body)
	}
	resp, _ := do(t, s.App, http.MethodGet, "/healthz", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "standard methods are untouched")
}

// DNS rebinding: on a loopback listen address only loopback names and the listen host are
// answered; other Host headers get a JSON 421 with a trace_id.
func TestHostGuard(t *testing.T) {
	t.Parallel()
	build := func(listen string, allowed ...string) *fiber.App {
		cfg := config.Default().Server
		cfg.Listen, cfg.AllowedHosts = listen, allowed
		return New(Deps{Server: cfg, Logger: slog.New(slog.DiscardHandler), Registry: NewRegistry()}).App
	}
	get := func(app *fiber.App, host string) (*http.Response, string) {
		req := httptest.NewRequest(http.MethodGet, "/healthz", nil)
		req.Host = host
		resp, err := app.Test(req, -1)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	cases := []struct {
		app   *fiber.App
		host  string
		allow bool
	}{
		{build("127.0.0.1:8080"), "rebind.attacker.example", false},
		{build("127.0.0.1:8080"), "rebind.attacker.example:8080", false},
		{build("127.0.0.1:8080"), "127.0.0.1:8080", true},
		{build("127.0.0.1:8080"), "localhost:8080", true},
		{build("127.0.0.1:8080"), "LOCALHOST", true},
		{build("127.0.0.1:8080"), "[::1]:8080", true},
		{build("127.0.0.1:8080"), "app.localhost:8080", true},
		{build("127.0.0.1:8080"), "", false},
		{build("[::1]:9000"), "[::1]:9000", true},
		{build("[::1]:9000"), "evil.example", false},
		{build("0.0.0.0:8080"), "anything.example", true},
		{build("0.0.0.0:8080", "idvault.example.com", "*.internal.example"), "idvault.example.com:443", true},
		{build("0.0.0.0:8080", "idvault.example.com", "*.internal.example"), "a.internal.example", true},
		{build("0.0.0.0:8080", "idvault.example.com", "*.internal.example"), "internal.example.evil.com", false},
		{build("0.0.0.0:8080", "idvault.example.com"), "10.0.0.5:8080", false},
	}
	for _, c := range cases {
		resp, body := get(c.app, c.host)
		if c.allow {
			require.Equal(t, http.StatusOK, resp.StatusCode, "host %q: %s", c.host, body)
			continue
		}
		require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode, "host %q", c.host)
		require.Contains(t, body, `"code":"host_not_allowed"`)
		requireTraced(t, resp, body)
	}
}
