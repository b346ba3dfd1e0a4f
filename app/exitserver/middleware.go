package exitserver

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apierr/fibererr"
	"github.com/idvault/idvault/app/httpguard"
	"github.com/idvault/idvault/app/requestid"
	"github.com/idvault/idvault/exit/exitdb"
)

// observe runs the chain, renders its error, and logs the request (route pattern, status,
// duration, request ID; never a body or a header value).
func (s *Server) observe(handleErr fiber.ErrorHandler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		start := time.Now()
		if err := c.Next(); err != nil {
			if herr := handleErr(c, err); herr != nil {
				return herr
			}
		}
		status := c.Response().StatusCode()
		level := slog.LevelInfo
		if status >= 500 {
			level = slog.LevelWarn
		}
		s.cfg.Logger.Log(c.UserContext(), level, "request", "method", c.Method(), "route", requestid.Route(c),
			"status", status, "duration_ms", float64(time.Since(start).Microseconds())/1000,
			"request_id", requestid.Of(c))
		return nil
	}
}

// recoverMiddleware turns a panic into internal_error and logs the stack.
func (s *Server) recoverMiddleware() fiber.Handler {
	return func(c *fiber.Ctx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				s.cfg.Logger.Error("panic", "request_id", requestid.Of(c), "route", requestid.Route(c),
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		return c.Next()
	}
}

// errorHandler renders any error as {"error": {"status", "code", "message", "trace_id"}}.
// Errors that are not *apierr.Error become internal_error; their text only reaches the log.
func (s *Server) errorHandler(c *fiber.Ctx, err error) error {
	if httpguard.DropSpare(c, err) {
		return nil
	}
	e := fibererr.FromFiber(err, apierr.PayloadTooLarge)
	requestid.Ensure(c)
	if e.Code.Status >= 500 {
		s.cfg.Logger.Error("request failed", "request_id", requestid.Of(c), "route", requestid.Route(c),
			"code", e.Code.Name, "err", e.Error())
	}
	discardBody(c)
	switch {
	case e.RetryAfter > 0:
		c.Set(fiber.HeaderRetryAfter, apierr.RetryAfterSeconds(e.RetryAfter))
	case e.Code == apierr.DatabaseUnavailable:
		c.Set(fiber.HeaderRetryAfter, "1")
	}
	return c.Status(e.Code.Status).JSON(apierr.Body(e, apierr.StyleTanker, requestid.Of(c)))
}

// drainOnError is how much of an unread request body is read after an error.
const drainOnError = 64 << 20

// discardBody reads what is left of the request body, up to drainOnError bytes, so that a
// client still sending sees the answer rather than a reset connection. The connection is
// closed after the answer when the body was not read to its end (over the limit, or a read
// that failed, as a stalled body's): what is left of it cannot be told from the next request.
func discardBody(c *fiber.Ctx) {
	// CopyN ends with io.EOF when the body ended within the limit; any other end (the limit,
	// a read that failed or timed out) leaves the rest of the body on the connection.
	if _, err := io.CopyN(io.Discard, requestBody(c), drainOnError); err != io.EOF {
		c.Response().Header.SetConnectionClose()
	}
}

func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz answers 200 when the database answers and 503 (database_unavailable) otherwise.
func (s *Server) readyz(c *fiber.Ctx) error {
	if err := s.db.Ping(c.UserContext()); err != nil {
		return classifyDBError(err)
	}
	return c.JSON(fiber.Map{"status": "ready", "checks": fiber.Map{"database": "ok"}})
}

// classifyDBError maps a database error: unavailable is 503, anything else internal_error.
func classifyDBError(err error) error {
	if errors.Is(err, exitdb.ErrUnavailable) {
		return apierr.DatabaseUnavailable.Wrap(err)
	}
	return apierr.Internal(err)
}
