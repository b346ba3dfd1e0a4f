package loadgen_test

import (
	"io"
	"testing"

	"github.com/valyala/fasthttp"

	"idvault/app/apptest"
	"idvault/app/config"
	"idvault/app/idserver"
	"idvault/app/logging"
	"idvault/app/server"
)

func BenchmarkInProc(b *testing.B) {
	env := apptest.New(b)
	is := env.CreateApp(b, false).App
	log, _ := logging.New(logging.Options{Level: "info"}, io.Discard)
	app := env.Server(func(d *server.Deps) {
		d.Logger = log
		d.IdentityServer = idserver.New(is.ID, env.Apps, env.Dir, config.IdentityServer{Enabled: true}, env.Prom, log)
	})
	env.Dir.Permanent(is, "known@example.com")
	cases := []struct {
		name, method, path string
		h                  fasthttp.RequestHandler
	}{
		{"echo", "POST", "/echo", apptest.EchoApp().Handler()},
		{"healthz", "GET", "/healthz", app.Handler()},
		{"identity", "POST", "/identity", app.Handler()},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			var ctx fasthttp.RequestCtx
			t0 := cpuTime()
			for b.Loop() {
				ctx.Request.Reset()
				ctx.Response.Reset()
				ctx.Request.Header.SetMethod(c.method)
				ctx.Request.SetRequestURI(c.path)
				ctx.Request.Header.SetContentType("application/json")
				ctx.Request.SetBodyString(`{"email":"known@example.com"}`)
				c.h(&ctx)
				if ctx.Response.StatusCode() != 200 {
					b.Fatal(ctx.Response.StatusCode(), string(ctx.Response.Body()))
				}
			}
			b.ReportMetric(float64((cpuTime()-t0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
