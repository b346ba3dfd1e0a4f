// Package requestid gives every answer of idvault's HTTP servers (`idvault serve` and
// `idvault exit`) an X-Request-ID, logged with the request and echoed as the trace_id of error
// bodies, and names a request's route for logs and metrics.
package requestid

import (
	"crypto/rand"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"
	"github.com/google/uuid"
)

const localsKey = "requestid"

// MaxLen is the longest client X-Request-ID kept.
const MaxLen = 64

// newID makes a request ID: a random (version 4) UUID read from crypto/rand on its own. On
// Linux 6.11 and later crypto/rand reads from the vDSO's getrandom, about 50 ns for 16 bytes
// without a lock or a system call; a block of IDs shared under a lock made requests wait on one
// another under load.
func newID() string {
	var u uuid.UUID
	_, _ = rand.Read(u[:])  // crypto/rand.Read never returns an error
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // variant RFC 4122
	return u.String()
}

// Middleware puts an X-Request-ID on every response: the client's own when it is short (up to
// MaxLen characters) and made of safe characters (letters, digits, '-', '_', '.', ':'), a new
// UUID otherwise. The ID is logged and echoed as trace_id, so quotes, escapes and control
// characters must never get through.
func Middleware() fiber.Handler {
	return func(c *fiber.Ctx) error {
		Assign(c)
		return c.Next()
	}
}

// Assign gives the request its ID as Middleware does, for a middleware of the caller's that
// does more around it.
func Assign(c *fiber.Ctx) {
	var id string
	if given := c.Request().Header.Peek(fiber.HeaderXRequestID); safe(utils.UnsafeString(given)) {
		id = string(given)
	} else {
		id = newID()
	}
	c.Locals(localsKey, id)
	c.Set(fiber.HeaderXRequestID, id)
}

// Pick is the request ID Middleware gives a request whose X-Request-ID header is given ("" when
// it has none), for a server that is not fiber's.
func Pick(given string) string {
	if safe(given) {
		return given
	}
	return newID()
}

func safe(id string) bool {
	if id == "" || len(id) > MaxLen {
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

// Ensure gives a request that never reached the middleware (one fasthttp refused while reading
// it: headers or body too large, an unknown method) a request ID of its own, so that its error
// carries a trace_id and an X-Request-ID like every other.
func Ensure(c *fiber.Ctx) {
	if Of(c) != "" {
		return
	}
	id := newID()
	c.Locals(localsKey, id)
	c.Set(fiber.HeaderXRequestID, id)
}

// Of is the request's ID ("" before the middleware ran).
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
