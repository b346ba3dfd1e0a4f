// Package fiberid is the request ID's side in fiber's applications (the main server): it gives
// a request its ID by requestid's rules, keeps it in the request's locals for the log and the
// error handler, and names a request's route for logs and metrics.
package fiberid

import (
	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/idvault/idvault/app/requestid"
)

const localsKey = "requestid"

// Assign gives the request its ID (requestid.Pick of its X-Request-ID) and puts it on the
// response, for the main server's middleware.
func Assign(c *fiber.Ctx) {
	var id string
	if given := c.Request().Header.Peek(fiber.HeaderXRequestID); requestid.Safe(utils.UnsafeString(given)) {
		id = string(given) // a copy: fasthttp reuses the header's bytes
	} else {
		id = requestid.New()
	}
	set(c, id)
}

// Ensure gives a request that never reached the middleware (one fasthttp refused while reading
// it: headers or body too large, an unknown method) a request ID of its own, so that its error
// carries a trace_id and an X-Request-ID like every other.
func Ensure(c *fiber.Ctx) {
	if Of(c) == "" {
		set(c, requestid.New())
	}
}

func set(c *fiber.Ctx, id string) {
	c.Locals(localsKey, id)
	c.Set(fiber.HeaderXRequestID, id)
}

// Of is the request's ID ("" before Assign or Ensure).
func Of(c *fiber.Ctx) string {
	id, _ := c.Locals(localsKey).(string)
	return id
}

// Route is the matched route pattern, never the raw path (which may hold emails), or
// "unmatched".
func Route(c *fiber.Ctx) string {
	r := c.Route()
	if r == nil || r.Path == "" || (r.Path == "/" && c.Path() != "/") || r.Path == "/*" {
		return "unmatched"
	}
	return r.Path
}
