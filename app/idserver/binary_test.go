package idserver_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
)

func TestConfigRefusesUnauthenticatedRemote(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		listen, token string
		allowUnauth   bool
		refused       bool
	}{
		"loopback, no token":            {"127.0.0.1:8080", "", false, false},
		"remote, no token":              {"0.0.0.0:8080", "", false, true},
		"remote, token":                 {"0.0.0.0:8080", "a-token-of-16-chars!", false, false},
		"remote, explicitly open":       {"0.0.0.0:8080", "", true, false},
		"token too short":               {"127.0.0.1:8080", "short", false, true},
		"remote v6 all, no token":       {"[::]:8080", "", false, true},
		"loopback localhost, no token":  {"localhost:8080", "", false, false},
		"remote public address, no tok": {"192.0.2.1:8080", "", false, true},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := config.Default()
			cfg.Server.Listen = c.listen
			cfg.IdentityServer = config.DefaultIdentityServer()
			cfg.IdentityServer.Enabled, cfg.IdentityServer.AppID = true, strings.Repeat("A", 43)+"="
			cfg.IdentityServer.Token, cfg.IdentityServer.AllowUnauthenticated = c.token, c.allowUnauth
			var msgs []string
			for _, err := range cfg.Validate() {
				msgs = append(msgs, err.Error())
			}
			joined := strings.Join(msgs, "\n")
			if c.refused {
				require.Contains(t, joined, "identity_server.token")
			} else {
				require.NotContains(t, joined, "identity_server")
			}
		})
	}
}

// With identity_server.oidc on, every request needs a credential (the app token or an ID
// token), so a remote identity server without an app token is not refused.
func TestConfigAcceptsRemoteOIDCWithoutToken(t *testing.T) {
	t.Parallel()
	cfg := config.Default()
	cfg.Server.Listen = "0.0.0.0:8080"
	cfg.Verification.Enabled = false
	cfg.FakeAuth.Enabled = false
	cfg.IdentityServer = config.DefaultIdentityServer()
	cfg.IdentityServer.Enabled, cfg.IdentityServer.AppID = true, strings.Repeat("A", 43)+"="
	cfg.IdentityServer.OIDC.Issuer, cfg.IdentityServer.OIDC.Audience = "https://auth.example.com", "web"
	require.Empty(t, cfg.Validate())
}
