package server

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/clientip"
	"github.com/idvault/idvault/app/logging"
	"github.com/idvault/idvault/app/requestid/fiberid"
)

// front is the application's one middleware, what every request goes through before its
// route, in this order: the request ID (fiberid.Assign); the request log and metrics
// (observe), around the rest; panic recovery; the Host check (hostAllowed, nil for none, see
// httpguard.HostCheck); the body's content decoding (decodeBody). It is one handler rather
// than five app.Use: fiber matches each Use as a route and calls it through a Next of its own
// (BenchmarkAroundHandlers measures everything around a handler).
func front(log *slog.Logger, m *httpMetrics, proxies clientip.Proxies, handleErr fiber.ErrorHandler,
	hostAllowed func(string) bool, decodeBody func(*fiber.Ctx) error) fiber.Handler {
	guarded := func(c *fiber.Ctx) (err error) {
		defer recoverPanic(log, c, &err)
		if hostAllowed != nil && !hostAllowed(utils.UnsafeString(c.Request().Host())) { // not kept: no copy
			return apierr.HostNotAllowed.New()
		}
		if err := decodeBody(c); err != nil {
			return err
		}
		return c.Next()
	}
	return func(c *fiber.Ctx) error {
		fiberid.Assign(c)
		return observe(c, log, m, proxies, handleErr, guarded)
	}
}

// observe runs next (the rest of the chain), renders its error (so the final status is known),
// then logs the request and records its metrics. It logs the route pattern, not the URL: query
// strings carry emails, and nothing secret may reach the log.
func observe(c *fiber.Ctx, log *slog.Logger, m *httpMetrics, proxies clientip.Proxies, handleErr fiber.ErrorHandler, next fiber.Handler) error {
	start := time.Now()
	err := next(c)
	if err != nil {
		if herr := handleErr(c, err); herr != nil {
			return herr
		}
	}
	status := c.Response().StatusCode()
	route := fiberid.Route(c)
	end := time.Now()
	elapsed := end.Sub(start)
	m.observe(route, c.Method(), status, elapsed)
	level := slog.LevelInfo
	if status >= 500 && route != "/readyz" { // a 503 from /readyz is a state, not a failure
		level = slog.LevelError
	}
	// One line per request, kept cheap (it cost more than a known-email handler): typed
	// attributes, no caller lookup, formatted without slog's general machinery, and
	// buffered instead of costing a write(2) each (see package logging).
	logging.LogBulk(log, end, level, "request",
		slog.String("method", c.Method()), slog.String("route", route), slog.Int("status", status),
		slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
		slog.String("request_id", fiberid.Of(c)), slog.String("ip", proxies.Of(c).String()))
	return nil
}

// recoverPanic, deferred, turns a panic into an internal_error in *err and logs the stack
// (never the request).
func recoverPanic(log *slog.Logger, c *fiber.Ctx, err *error) {
	if r := recover(); r != nil {
		log.Error("panic", "request_id", fiberid.Of(c), "route", fiberid.Route(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		*err = fmt.Errorf("panic: %v", r)
	}
}

func statusLabel(status int) string { return strconv.Itoa(status) }
