package server

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/google/uuid"
)

const requestIDKey = "requestid"

// maxRequestIDLen is the longest client X-Request-ID kept.
const maxRequestIDLen = 64

// requestIDMiddleware puts an X-Request-ID on every response: the client's own when it is short
// (up to 64 characters) and made of safe characters (letters, digits, '-', '_', '.', ':'), a new
// UUID otherwise. The ID is logged and echoed as trace_id, so quotes, escapes and control
// characters must never get through.
func requestIDMiddleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		id := c.Get(fiber.HeaderXRequestID)
		if !safeRequestID(id) {
			id = uuid.NewString()
		}
		c.Locals(requestIDKey, id)
		c.Set(fiber.HeaderXRequestID, id)
		return c.Next()
	}
}

func safeRequestID(id string) bool {
	if id == "" || len(id) > maxRequestIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '-' || b == '_' || b == '.' || b == ':') {
			return false
		}
	}
	return true
}

// ensureRequestID gives a request that never reached the middleware (a request fasthttp refused
// while reading it: headers or body too large, an unknown method) a request ID of its own, so
// that its error carries a trace_id and an X-Request-ID like every other.
func ensureRequestID(c *fiber.Ctx) {
	if requestID(c) != "" {
		return
	}
	id := uuid.NewString()
	c.Locals(requestIDKey, id)
	c.Set(fiber.HeaderXRequestID, id)
}

func requestID(c *fiber.Ctx) string {
	id, _ := c.Locals(requestIDKey).(string)
	return id
}

// routeOf is the matched route pattern (never the raw path, which may hold emails).
func routeOf(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || r.Path == "" || (r.Path == "/" && c.Path() != "/") || r.Path == "/*" {
		return "unmatched"
	}
	return r.Path
}

// observe runs the rest of the chain, renders its error (so the final status is known), then
// logs the request and records its metrics. It logs the route pattern, not the URL: query
// strings carry emails, and nothing secret may reach the log.
func observe(log *slog.Logger, m *httpMetrics, handleErr fiber.ErrorHandler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		err := c.Next()
		if err != nil {
			if herr := handleErr(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		route := routeOf(c)
		elapsed := time.Since(start)
		m.observe(route, c.Method(), status, elapsed)
		level := slog.LevelInfo
		if status >= 500 && route != "/readyz" { // a 503 from /readyz is a state, not a failure
			level = slog.LevelError
		}
		log.Log(c.UserContext(), level, "request",
			"method", c.Method(), "route", route, "status", status,
			"duration_ms", float64(elapsed.Microseconds())/1000, "request_id", requestID(c), "ip", c.IP())
		return nil
	}
}

// recoverMiddleware turns a panic into an internal_error and logs the stack (never the request).
func recoverMiddleware(log *slog.Logger) fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				log.Error("panic", "request_id", requestID(c), "route", routeOf(c), "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return c.Next()
	}
}

func statusLabel(status int) string { return strconv.Itoa(status) }
