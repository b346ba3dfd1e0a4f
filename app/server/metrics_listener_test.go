package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
)

// The metrics listener of its own checks Host as the main listener does: on a loopback address
// only loopback names and its own host (or metrics.allowed_hosts) are answered; another Host
// header (DNS rebinding) gets the JSON 421 host_not_allowed naming metrics.allowed_hosts, and
// no metrics.
func TestMetricsListenerHostGuard(t *testing.T) {
	t.Parallel()
	s := New(Deps{Server: config.Default().Server, Logger: slog.New(slog.DiscardHandler), Registry: NewRegistry()})
	cases := []struct {
		listen  string
		allowed []string
		host    string
		allow   bool
	}{
		{"127.0.0.1:9090", nil, "127.0.0.1:9090", true},
		{"127.0.0.1:9090", nil, "localhost:9090", true},
		{"127.0.0.1:9090", nil, "[::1]:9090", true},
		{"127.0.0.1:9090", nil, "rebind.attacker.example:9090", false},
		{"127.0.0.1:9090", nil, "", false},
		{"[::1]:9090", nil, "evil.example", false},
		{"0.0.0.0:9090", nil, "anything.example", true},
		{"0.0.0.0:9090", []string{"metrics.internal.example"}, "metrics.internal.example:9090", true},
		{"0.0.0.0:9090", []string{"metrics.internal.example"}, "10.0.0.5:9090", false},
		{"127.0.0.1:9090", []string{"scrape.example"}, "localhost:9090", false},
	}
	for _, c := range cases {
		h := s.MetricsListenerHandler(c.listen, c.allowed)
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Host = c.host
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if c.allow {
			require.Equal(t, http.StatusOK, rec.Code, "%s, host %q", c.listen, c.host)
			require.Contains(t, rec.Body.String(), "go_goroutines")
			continue
		}
		require.Equal(t, http.StatusMisdirectedRequest, rec.Code, "%s, host %q", c.listen, c.host)
		require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
		var body struct {
			Error struct {
				Status  int    `json:"status"`
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
		require.Equal(t, 421, body.Error.Status)
		require.Equal(t, "host_not_allowed", body.Error.Code)
		require.Contains(t, body.Error.Message, "metrics.allowed_hosts")
		require.NotContains(t, rec.Body.String(), "go_goroutines")
	}
}
