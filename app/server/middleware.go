package server

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/clientip"
	"github.com/idvault/idvault/app/logging"
	"github.com/idvault/idvault/app/requestid"
)

// observe runs the rest of the chain, renders its error (so the final status is known), then
// logs the request and records its metrics. It logs the route pattern, not the URL: query
// strings carry emails, and nothing secret may reach the log.
func observe(log *slog.Logger, m *httpMetrics, proxies clientip.Proxies, handleErr fiber.ErrorHandler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := handleErr(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		route := requestid.Route(c)
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
			slog.String("request_id", requestid.Of(c)), slog.String("ip", proxies.Of(c).String()))
		return nil
	}
}

// recoverMiddleware turns a panic into an internal_error and logs the stack (never the request).
func recoverMiddleware(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic", "request_id", requestid.Of(c), "route", requestid.Route(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return c.Next()
	}
}

func statusLabel(status int) string { return strconv.Itoa(status) }
