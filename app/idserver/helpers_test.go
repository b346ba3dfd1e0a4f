package idserver_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/idservertest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/server"
)

// fixture is a real server with the identity server on, serving one app (not in test mode:
// the identity server does not need it).
type fixture struct {
	env   *apptest.Env
	http  *fiber.App
	app   apps.App
	token string
	// bearer, when set, gives the ID token a request for an email carries (instead of token).
	bearer func(t *testing.T, email string) string

	secrets apptest.Secrets // every private identity handed out, checked against the log at the end
}

func newFixture(t *testing.T, opts ...func(*config.IdentityServer)) *fixture {
	t.Helper()
	env := apptest.New(t)
	f := &fixture{env: env, app: env.CreateApp(t, false).App}
	cfg := config.IdentityServer{Enabled: true, AppID: apps.FormatID(f.app.ID)}
	for _, o := range opts {
		o(&cfg)
	}
	f.token = cfg.Token
	f.http = env.Server(func(d *server.Deps) {
		d.IdentityServer = idserver.New(f.app.ID, env.Apps, env.Dir, cfg, env.Prom, env.Log)
	})
	t.Cleanup(func() { f.requireNothingSecretLogged(t) })
	return f
}

func (f *fixture) requireNothingSecretLogged(t *testing.T) {
	t.Helper()
	f.secrets.RequireNotLogged(t, f.env.LogBuf.String())
}

func (f *fixture) keep(ids ...string) { f.secrets.Keep(ids...) }

// do sends a request with the configured credential, if any: an ID token of the body's email
// (bearer), or the app token.
func (f *fixture) do(t *testing.T, method, target string, body any) apptest.Response {
	t.Helper()
	var h []string
	switch {
	case f.bearer != nil:
		email, _ := body.(map[string]any)["email"].(string)
		h = []string{"Authorization", "Bearer " + f.bearer(t, email)}
	case f.token != "":
		h = []string{"Authorization", "Bearer " + f.token}
	}
	return apptest.Do(t, f.http, method, target, body, h...)
}

// record is the body of POST /identity (package idservertest's, which app/e2e shares).
type record = idservertest.Record

// identity calls POST /identity and checks the record: a UUID id hashed into a valid identity
// of the app, and a provisional identity (when present) for the email.
func (f *fixture) identity(t *testing.T, email string) record {
	t.Helper()
	resp := f.do(t, http.MethodPost, "/identity", map[string]any{"email": email})
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"), "a private identity is never kept by a browser's or a proxy's cache")
	var r record
	resp.JSON(t, &r)
	m := resp.Map(t)
	if r.ProvisionalIdentity != nil {
		require.NotEmpty(t, *r.ProvisionalIdentity, "provisionalIdentity is absent or set: %s", resp.Body)
		require.Len(t, m, 5)
	} else {
		require.Len(t, m, 4, "id, serviceIdentity, tankerIdentity, registered: %s", resp.Body)
	}
	require.Equal(t, r.ServiceIdentity, r.TankerIdentity, "tankerIdentity is serviceIdentity, for the clients of Tanker's sample server")
	f.keep(r.ServiceIdentity, r.Provisional())
	_, err := uuid.Parse(r.ID)
	require.NoError(t, err, "id is a UUID")
	require.NoError(t, apptest.CheckPermanent(t, f.app, r.ServiceIdentity).CheckUserID(r.ID), "the id is the user ID hashed into the identity")
	if r.ProvisionalIdentity != nil {
		apptest.CheckProvisional(t, f.app, *r.ProvisionalIdentity, strings.TrimSpace(email))
	}
	return r
}

// publicIdentity calls POST /public_identity.
func (f *fixture) publicIdentity(t *testing.T, email string) string {
	t.Helper()
	resp := f.do(t, http.MethodPost, "/public_identity", map[string]any{"email": email})
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	m := resp.Map(t)
	require.Len(t, m, 1, "only publicIdentity: %s", resp.Body)
	pub, ok := m["publicIdentity"].(string)
	require.True(t, ok, "publicIdentity is a string: %s", resp.Body)
	return pub
}

// register calls PATCH /identity and checks the Express-style answer.
func (f *fixture) register(t *testing.T, email string) {
	t.Helper()
	resp := f.do(t, http.MethodPatch, "/identity", map[string]any{"email": email})
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	require.Equal(t, "OK", string(resp.Body))
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
}
