package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
)

// The request log names the client as the per-client limits count it: the peer, or, behind a
// trusted proxy, the client X-Forwarded-For names (never an address a client wrote itself).
func TestRequestLogNamesTheClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		proxies []string
		xff     string
		want    string
	}{
		{"no proxy", nil, "", "127.0.0.1"},
		{"forged header from an untrusted peer", nil, "203.0.113.7", "127.0.0.1"},
		{"behind a trusted proxy", []string{"127.0.0.1"}, "198.51.100.9, 203.0.113.7", "203.0.113.7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			logs := &lockedLog{}
			cfg := config.Default().Server
			cfg.AllowedHosts = nil
			cfg.TrustedProxies = tc.proxies
			s := New(Deps{Server: cfg, Logger: slog.New(slog.NewJSONHandler(logs, nil)), Registry: NewRegistry()})
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			go func() { _ = s.App.Listener(ln) }()
			t.Cleanup(func() { _ = s.App.Shutdown() })
			req, err := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/healthz", nil)
			require.NoError(t, err)
			if tc.xff != "" {
				req.Header.Set("X-Forwarded-For", tc.xff)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Eventually(t, func() bool { return strings.Contains(logs.String(), `"route":"/healthz"`) },
				5*time.Second, 10*time.Millisecond)
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				var entry map[string]any
				require.NoError(t, json.Unmarshal([]byte(line), &entry))
				if entry["route"] == "/healthz" {
					require.Equal(t, tc.want, entry["ip"])
				}
			}
		})
	}
}

// lockedLog is written by the server's goroutines and read by the test.
type lockedLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
