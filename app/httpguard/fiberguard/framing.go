// Package fiberguard is httpguard's side in fiber's applications (the main server): the
// framing check made on fasthttp's raw header block before any routing, and the drop of a
// spare connection whose header time limit ran out. The checks themselves are httpguard's,
// which imports no HTTP framework.
package fiberguard

import (
	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/httpguard"
)

// Framing is httpguard.FramingOf's check of the raw header block fasthttp sets aside.
func Framing(h *fasthttp.RequestHeader) string { return httpguard.FramingOf(h.RawHeaders()) }

// RefuseBadFraming makes app answer a request whose framing is ambiguous (Framing) before
// any routing or middleware: handleErr renders refuse(reason), and the connection is closed
// after the answer, since where the next request starts cannot be known.
func RefuseBadFraming(app *fiber.App, handleErr fiber.ErrorHandler, refuse func(reason string) error) {
	srv := app.Server()
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		reason := Framing(&fctx.Request.Header)
		if reason == "" {
			next(fctx)
			return
		}
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		_ = handleErr(c, refuse(reason))
		fctx.Response.Header.SetConnectionClose()
	}
}
