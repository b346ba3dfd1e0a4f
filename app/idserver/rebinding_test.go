package idserver_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/server"
)

// A tokenless identity server on loopback is not reachable from a web page: DNS rebinding
// brings a foreign Host header (421), and a cross-site form or no-cors fetch cannot send
// application/json (415). The server's own clients still get their identity.
func TestTokenlessLoopbackServerResistsRebindingAndCrossSiteForms(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	app := env.CreateApp(t, false).App
	cfg := config.IdentityServer{Enabled: true, AppID: apps.FormatID(app.ID)}
	h := env.Server(func(d *server.Deps) {
		d.Server = config.Default().Server // listen 127.0.0.1:8080, allowed_hosts empty
		d.IdentityServer = idserver.New(app.ID, env.Apps, env.Dir, cfg, env.Prom, env.Log)
	})
	post := func(host, contentType string) int {
		req := httptest.NewRequest(http.MethodPost, "/identity", bytes.NewBufferString(`{"email": "victim@example.com"}`))
		req.Host = host
		req.Header.Set("Content-Type", contentType)
		resp, err := h.Test(req, -1)
		require.NoError(t, err)
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NotContains(t, string(raw), `"private_identity"`, "host %s type %s", host, contentType)
		return resp.StatusCode
	}
	require.Equal(t, http.StatusMisdirectedRequest, post("rebind.attacker.example", "text/plain"))
	require.Equal(t, http.StatusMisdirectedRequest, post("rebind.attacker.example:8080", "application/json"))
	require.Equal(t, http.StatusUnsupportedMediaType, post("localhost:8080", "text/plain"))
	require.Equal(t, http.StatusUnsupportedMediaType, post("127.0.0.1:8080", "application/x-www-form-urlencoded"))

	req := httptest.NewRequest(http.MethodPost, "/identity", bytes.NewBufferString(`{"email": "victim@example.com"}`))
	req.Host = "127.0.0.1:8080"
	req.Header.Set("Content-Type", "application/json")
	resp, err := h.Test(req, -1)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
}
