package idserver_test

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/server"
)

// BenchmarkIdentityServer measures requests per second through a real listener and keep-alive
// connections, for each route and for a fiber route that only echoes JSON, in the same run and
// with the same driver (apptest.BenchHTTP). Run: go test -run '^$' -bench . ./app/idserver/
func BenchmarkIdentityServer(b *testing.B) {
	post := func(method, url, email string) *http.Request {
		req, _ := http.NewRequest(method, url, strings.NewReader(`{"email":"`+email+`"}`))
		req.Header.Set("Content-Type", "application/json")
		return req
	}
	b.Run("echo", func(b *testing.B) {
		base, client := apptest.Serve(b, apptest.EchoApp())
		apptest.BenchHTTP(b, client, http.StatusOK, func(int64) *http.Request {
			return post(http.MethodPost, base+"/echo", "bench@example.com")
		})
	})

	env := apptest.New(b)
	a := env.CreateApp(b, false).App
	quiet := slog.New(slog.DiscardHandler)
	app := env.Server(func(d *server.Deps) {
		d.Logger = quiet
		d.IdentityServer = idserver.New(a.ID, env.Apps, env.Dir, config.IdentityServer{Enabled: true}, env.Prom, quiet)
	})
	base, client := apptest.Serve(b, app)
	known := make([]string, 100)
	for i := range known {
		known[i] = fmt.Sprintf("known%d@example.com", i)
		if _, err := env.Dir.Permanent(a, known[i]); err != nil {
			b.Fatal(err)
		}
	}

	b.Run("identity_new", func(b *testing.B) {
		apptest.BenchHTTP(b, client, http.StatusOK, func(i int64) *http.Request {
			return post(http.MethodPost, base+"/identity", fmt.Sprintf("new%d-%d@example.com", b.N, i))
		})
	})
	b.Run("identity_known", func(b *testing.B) {
		apptest.BenchHTTP(b, client, http.StatusOK, func(i int64) *http.Request {
			return post(http.MethodPost, base+"/identity", known[i%int64(len(known))])
		})
	})
	// After the first round each known email has a provisional identity: steady-state reads.
	b.Run("public_identity", func(b *testing.B) {
		apptest.BenchHTTP(b, client, http.StatusOK, func(i int64) *http.Request {
			return post(http.MethodPost, base+"/public_identity", known[i%int64(len(known))])
		})
	})
}
