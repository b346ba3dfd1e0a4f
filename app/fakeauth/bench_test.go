package fakeauth_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/server"
)

// BenchmarkFakeAuth measures requests per second through a real listener and keep-alive
// connections, for each route and for a fiber route that only echoes JSON, in the same run and
// with the same driver (apptest.BenchHTTP). Run: go test -run '^$' -bench . ./app/fakeauth/
func BenchmarkFakeAuth(b *testing.B) {
	b.Run("echo", func(b *testing.B) {
		base, client := apptest.Serve(b, apptest.EchoApp())
		apptest.BenchHTTP(b, client, http.StatusOK, func(int64) *http.Request {
			req, _ := http.NewRequest(http.MethodPost, base+"/echo", strings.NewReader(`{"email":"bench@example.com"}`))
			req.Header.Set("Content-Type", "application/json")
			return req
		})
	})

	env := apptest.New(b)
	quiet := slog.New(slog.DiscardHandler)
	app := env.Server(func(d *server.Deps) {
		d.Logger = quiet
		d.FakeAuth = fakeauth.New(env.Apps, env.Dir, config.Default().FakeAuth, env.Prom, quiet)
	})
	a := env.CreateApp(b, true).App
	base, client := apptest.Serve(b, app)
	base += "/apps/" + apps.URLID(a.ID)
	get := func(path string) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		return req
	}
	known := make([]string, 100)
	for i := range known {
		known[i] = fmt.Sprintf("known%d@example.com", i)
		if _, err := env.Dir.Permanent(a, known[i]); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("private_identity_known", func(b *testing.B) {
		apptest.BenchHTTP(b, client, http.StatusOK, func(int64) *http.Request {
			return get("/private_identity?email=known0%40example.com")
		})
	})
	b.Run("public_identities_100_known", func(b *testing.B) {
		q := "/public_identities?emails=" + strings.Join(known, ",")
		apptest.BenchHTTP(b, client, http.StatusOK, func(int64) *http.Request { return get(q) })
	})
	b.Run("private_identity_first_time", func(b *testing.B) {
		apptest.BenchHTTP(b, client, http.StatusOK, func(i int64) *http.Request {
			return get(fmt.Sprintf("/private_identity?email=new%d-%d%%40example.com", b.N, i))
		})
	})
	b.Run("public_identities_100_first_time", func(b *testing.B) {
		apptest.BenchHTTP(b, client, http.StatusOK, func(i int64) *http.Request {
			list := make([]string, 100)
			for j := range list {
				list[j] = fmt.Sprintf("p%d-%d-%d@example.com", b.N, i, j)
			}
			return get("/public_identities?emails=" + strings.Join(list, ","))
		})
	})
	b.Run("disposable_private_identity", func(b *testing.B) {
		apptest.BenchHTTP(b, client, http.StatusOK, func(int64) *http.Request {
			return get("/disposable_private_identity")
		})
	})
}
