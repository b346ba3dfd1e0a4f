package console_test

import (
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/server"
)

// The server page says whether clients may call the identity server with ID tokens, from
// which issuer, and for which browser origins.
func TestServerPageShowsOIDC(t *testing.T) {
	t.Parallel()
	row := regexp.MustCompile(`<tr><th scope="row">Identity server: clients&#39; ID tokens \(OIDC\)</th><td class="(ok|muted)">(on|off)</td>[^\n]*`)
	for name, c := range map[string]struct {
		oidc    bool
		state   string
		comment string
	}{
		"off": {false, "off", ""},
		"on":  {true, "on", "issuer https://auth.example.com/realms/demo; browsers from https://app.example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			env := apptest.New(t)
			a := env.CreateApp(t, false).App
			cfg := config.IdentityServer{Enabled: true, AppID: apps.FormatID(a.ID)}
			if c.oidc {
				cfg.Token = "an-app-token-of-32-characters-xx"
				cfg.OIDC = config.DefaultIdentityServer().OIDC
				cfg.OIDC.Issuer, cfg.OIDC.Audience = "https://auth.example.com/realms/demo", "web"
				cfg.CORSOrigins = []string{"https://app.example.com"}
			}
			f := &fixture{env: env, app: env.Server(func(d *server.Deps) {
				d.Admin = admin.New(env.Apps, env.Store, adminToken, admin.Options{})
				d.Console = server.ConsoleSettings{Enabled: true, Version: "test", DataFile: env.Store.Path()}
				d.IdentityServer = idserver.New(a.ID, env.Apps, env.Dir, cfg, env.Prom, env.Log)
			})}
			cookie, _ := f.signIn(t)
			r := f.get(t, "/console/server", cookie)
			require.Equal(t, http.StatusOK, r.Status)
			m := row.FindStringSubmatch(string(r.Body))
			require.NotNil(t, m, "the OIDC row: %s", r.Body)
			require.Equal(t, c.state, m[2])
			require.Contains(t, m[0], "identity_server.oidc.issuer")
			if c.comment != "" {
				require.Contains(t, m[0], c.comment)
			}
		})
	}
}
