package idserver_test

import (
	"net/http"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/server"
)

// The fake authentication server and the identity server share one record per (app, email):
// one email gets one permanent identity from both, whichever creates it.
func TestSharedWithFakeAuth(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	a := env.CreateApp(t, true).App
	f := &fixture{env: env, app: a}
	f.http = env.Server(func(d *server.Deps) {
		d.IdentityServer = idserver.New(a.ID, env.Apps, env.Dir, config.IdentityServer{Enabled: true}, env.Prom, env.Log)
		d.FakeAuth = fakeauth.New(env.Apps, env.Dir, config.FakeAuth{Enabled: true}, env.Prom, env.Log)
	})
	t.Cleanup(func() { f.requireNothingSecretLogged(t) })
	fakePrivate := func(email string) string {
		resp := apptest.Do(t, f.http, http.MethodGet, "/apps/"+apps.URLID(a.ID)+"/private_identity?email="+url.QueryEscape(email), nil)
		require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
		perm := resp.Map(t)["private_permanent_identity"].(string)
		f.keep(perm)
		return perm
	}

	t.Run("created by the identity server", func(t *testing.T) {
		r := f.identity(t, "one@example.com")
		require.Equal(t, r.ServiceIdentity, fakePrivate("one@example.com"))
	})
	t.Run("created by fake authentication", func(t *testing.T) {
		perm := fakePrivate("Two@EXAMPLE.com")
		require.Equal(t, perm, f.identity(t, "Two@example.com ").ServiceIdentity, "same normalisation")
	})
	t.Run("registration through PATCH is seen by public_identities", func(t *testing.T) {
		f.publicIdentity(t, "three@example.com")
		r := f.identity(t, "three@example.com")
		f.register(t, "three@example.com")
		resp := apptest.Do(t, f.http, http.MethodGet, "/apps/"+apps.URLID(a.ID)+"/public_identities?emails=three%40example.com", nil)
		require.Equal(t, http.StatusOK, resp.Status)
		var got []map[string]string
		resp.JSON(t, &got)
		require.Equal(t, apptest.PublicOf(t, r.ServiceIdentity), got[0]["public_identity"])
	})
}

// Concurrent POST /identity for one new email yield one identity (in memory; the real binary
// is tested in binary_test.go).
func TestConcurrentIdentity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 40
	got := make([]record, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			resp := apptest.Do(t, f.http, http.MethodPost, "/identity", `{"email": "race@example.com"}`)
			if resp.Status == http.StatusOK {
				resp.JSON(t, &got[i])
			}
		})
	}
	close(start)
	wg.Wait()
	want := f.identity(t, "race@example.com")
	for i := range got {
		require.Equal(t, want, got[i], "request %d", i)
	}
}
