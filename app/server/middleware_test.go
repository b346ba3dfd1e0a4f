package server

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
)

// Every request goes through all of the front middleware, whatever its outcome: a refused Host
// (logged as unmatched: it is refused before routing),
// a panic, a compressed body and a plain answer each get an X-Request-ID, one request log line
// with the route, status, duration, request ID and client address, and a count in the metrics
// under their status; the panic is recovered into a JSON 500 and the body arrives decoded.
func TestFrontMiddlewareObservesEveryOutcome(t *testing.T) {
	t.Parallel()
	logs := &bytes.Buffer{}
	cfg := config.Default().Server
	cfg.AllowedHosts = []string{"example.com"}
	s := New(Deps{Server: cfg, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Registry: NewRegistry()})
	s.App.Get("/boom", func(*fiber.Ctx) error { panic("kaboom") })
	s.App.Post("/echo", func(c *fiber.Ctx) error { return c.Send(c.Body()) })

	send := func(method, target, host string, body []byte, gzipped bool) (*http.Response, string) {
		t.Helper()
		req := httptest.NewRequest(method, target, bytes.NewReader(body))
		req.Host = host
		if gzipped {
			req.Header.Set("Content-Encoding", "gzip")
		}
		resp, err := s.App.Test(req, -1)
		require.NoError(t, err)
		defer resp.Body.Close()
		var out bytes.Buffer
		_, _ = out.ReadFrom(resp.Body)
		return resp, out.String()
	}
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, _ = zw.Write([]byte(`{"hello":"world"}`))
	require.NoError(t, zw.Close())

	type outcome struct {
		route  string
		status int
		id     string
	}
	var want []outcome
	resp, body := send(http.MethodGet, "/healthz", "rebind.attacker.example", nil, false)
	require.Equal(t, http.StatusMisdirectedRequest, resp.StatusCode)
	require.Contains(t, body, `"code":"host_not_allowed"`)
	want = append(want, outcome{"unmatched", 421, resp.Header.Get("X-Request-ID")})
	resp, body = send(http.MethodGet, "/boom", "example.com", nil, false)
	require.Equal(t, http.StatusInternalServerError, resp.StatusCode)
	require.Contains(t, body, `"code":"internal_error"`)
	want = append(want, outcome{"/boom", 500, resp.Header.Get("X-Request-ID")})
	resp, body = send(http.MethodPost, "/echo", "example.com", zipped.Bytes(), true)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, `{"hello":"world"}`, body, "the handler sees the decoded body")
	want = append(want, outcome{"/echo", 200, resp.Header.Get("X-Request-ID")})
	resp, _ = send(http.MethodGet, "/healthz", "example.com", nil, false)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	want = append(want, outcome{"/healthz", 200, resp.Header.Get("X-Request-ID")})

	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["msg"] == "request" {
			lines = append(lines, m)
		}
	}
	require.Contains(t, logs.String(), `"msg":"panic"`, "the panic is logged with its stack")
	require.Len(t, lines, len(want), "one request line per request")
	for i, w := range want {
		require.NotEmpty(t, w.id, "request %d has an X-Request-ID", i)
		l := lines[i]
		require.Equal(t, w.route, l["route"], "request %d", i)
		require.EqualValues(t, w.status, l["status"], "request %d", i)
		require.Equal(t, w.id, l["request_id"], "request %d: the logged ID is the answered one", i)
		require.Contains(t, l, "duration_ms")
		require.NotEmpty(t, l["ip"])
		require.NotEmpty(t, l["method"])
	}
	_, metrics := send(http.MethodGet, "/metrics", "example.com", nil, false)
	for _, m := range []string{
		`idvault_http_requests_total{method="GET",route="unmatched",status="421"} 1`,
		`idvault_http_requests_total{method="GET",route="/boom",status="500"} 1`,
		`idvault_http_requests_total{method="POST",route="/echo",status="200"} 1`,
		`idvault_http_requests_total{method="GET",route="/healthz",status="200"} 1`,
	} {
		require.Contains(t, metrics, m+"\n")
	}
}
