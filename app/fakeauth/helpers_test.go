package fakeauth_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/server"
)

// fixture is a real server with fake authentication on and one test-mode app.
type fixture struct {
	env  *apptest.Env
	http *fiber.App
	app  apps.App
	base string // /apps/<URL-safe unpadded app ID>

	secrets apptest.Secrets // every private identity handed out, checked against the log at the end
}

func newFixture(t *testing.T, opts ...func(*config.FakeAuth)) *fixture {
	t.Helper()
	env := apptest.New(t)
	cfg := config.Default().FakeAuth
	cfg.Enabled = true
	for _, o := range opts {
		o(&cfg)
	}
	f := &fixture{env: env}
	f.http = env.Server(func(d *server.Deps) {
		d.FakeAuth = fakeauth.New(env.Apps, env.Dir, cfg, env.Prom, env.Log)
	})
	f.app = env.CreateApp(t, true).App
	f.base = "/apps/" + apps.URLID(f.app.ID)
	t.Cleanup(func() { f.requireNothingSecretLogged(t) })
	return f
}

func (f *fixture) requireNothingSecretLogged(t *testing.T) {
	t.Helper()
	f.secrets.RequireNotLogged(t, f.env.LogBuf.String())
}

func (f *fixture) keep(ids ...string) { f.secrets.Keep(ids...) }

func (f *fixture) get(t *testing.T, target string) apptest.Response {
	t.Helper()
	return apptest.Do(t, f.http, http.MethodGet, target, nil)
}

// privateIdentity calls GET private_identity and returns the identities, checking that the
// provisional key is absent (not empty, not null) when there is none.
func (f *fixture) privateIdentity(t *testing.T, email string) (perm, prov string) {
	t.Helper()
	resp := f.get(t, f.base+"/private_identity?email="+url.QueryEscape(email))
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	require.Equal(t, "no-store", resp.Header.Get("Cache-Control"), "a private identity is never kept by a browser's or a proxy's cache")
	var raw map[string]json.RawMessage
	resp.JSON(t, &raw)
	require.NoError(t, json.Unmarshal(raw["private_permanent_identity"], &perm), "body: %s", resp.Body)
	if p, ok := raw["private_provisional_identity"]; ok {
		require.NoError(t, json.Unmarshal(p, &prov))
		require.NotEmpty(t, prov, "a present provisional identity is not empty")
	}
	require.Len(t, raw, map[bool]int{false: 1, true: 2}[prov != ""], "no other keys: %s", resp.Body)
	f.keep(perm, prov)
	apptest.CheckPermanent(t, f.app, perm)
	if prov != "" {
		apptest.CheckProvisional(t, f.app, prov, strings.TrimSpace(email))
	}
	return perm, prov
}

type entry struct {
	Email          string `json:"email"`
	PublicIdentity string `json:"public_identity"`
}

// publicIdentities calls GET public_identities?emails=<comma-joined, URL-encoded>.
func (f *fixture) publicIdentities(t *testing.T, emails ...string) []string {
	t.Helper()
	resp := f.get(t, f.base+"/public_identities?emails="+url.QueryEscape(strings.Join(emails, ",")))
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	var got []entry
	resp.JSON(t, &got)
	require.Len(t, got, len(emails))
	out := make([]string, len(got))
	for i, e := range got {
		require.Equal(t, emails[i], e.Email, "answers are in request order")
		out[i] = e.PublicIdentity
	}
	return out
}

func (f *fixture) register(t *testing.T, email string) {
	t.Helper()
	resp := apptest.Do(t, f.http, http.MethodPut, f.base+"/private_identity?email="+url.QueryEscape(email), map[string]bool{"registered": true})
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	require.JSONEq(t, `{}`, string(resp.Body))
}

// decodePublic decodes a public identity's JSON document.
func decodePublic(t *testing.T, pub string) map[string]string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(pub)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}
