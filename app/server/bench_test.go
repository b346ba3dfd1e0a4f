package server

import (
	"io"
	"net"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/logging"
)

// BenchmarkAroundHandlers is what the application puts around a route's handlers, in
// process (no socket, so no connection deadlines or body streaming): a POST with a small JSON
// body to a route answering 2 bytes, through every middleware and fasthttp handler wrapper,
// the request log on (text, discarded) and the metrics.
func BenchmarkAroundHandlers(b *testing.B) {
	cfg := config.Default().Server // 127.0.0.1:8080: the Host check is on
	log, _ := logging.New(logging.Options{Level: "info", Format: "text"}, io.Discard)
	s := New(Deps{Server: cfg, Logger: log, Registry: NewRegistry()})
	b.Cleanup(s.Close)
	s.App.Post("/bench", func(c *fiber.Ctx) error { return c.SendString("{}") })
	if _, err := s.App.Test(httptest.NewRequest(fiber.MethodGet, "/healthz", nil)); err != nil { // builds the route tree
		b.Fatal(err)
	}
	h := s.App.Server().Handler
	var fctx fasthttp.RequestCtx
	fctx.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}, nil)
	body := []byte(`{"email":"someone@example.com"}`)
	b.ReportAllocs()
	for b.Loop() {
		fctx.Request.Reset()
		fctx.Request.Header.SetMethod(fiber.MethodPost)
		fctx.Request.SetRequestURI("/bench")
		fctx.Request.Header.SetHost("127.0.0.1:8080")
		fctx.Request.Header.SetContentType(fiber.MIMEApplicationJSON)
		fctx.Request.SetBody(body)
		fctx.Response.Reset()
		h(&fctx)
		if fctx.Response.StatusCode() != fiber.StatusOK {
			b.Fatalf("status %d: %s", fctx.Response.StatusCode(), fctx.Response.Body())
		}
	}
}
