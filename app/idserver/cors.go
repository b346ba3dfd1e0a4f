package idserver

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/requestid/fiberid"
)

// cors is identity_server.cors_origins: the web origins allowed to call the identity server
// from a browser (with an ID token; the app token never belongs in a browser).
type cors struct {
	origins map[string]bool
	list    []string
}

func newCORS(origins []string) cors {
	c := cors{origins: map[string]bool{}, list: origins}
	for _, o := range origins {
		c.origins[o] = true
	}
	return c
}

// CORSOrigins are identity_server.cors_origins.
func (h *Handler) CORSOrigins() []string { return h.cors.list }

// corsMaxAge is how long a browser may cache a preflight answer (seconds).
const corsMaxAge = "600"

// CORS answers the preflight (OPTIONS with Access-Control-Request-Method) of a listed origin
// with 204, the origin, the route's methods and "Authorization, Content-Type"; it grants the
// listed origin the answers of the identity server's routes (errors included, so a page can
// read them). Any other origin gets no grant: its preflight goes on to the router (405) and
// its answers carry no Access-Control-Allow-Origin, so the browser blocks them; each refusal
// is logged with the origin (never a token), so that a 405 preflight in the request log is
// not taken for a routing bug. Answers vary on Origin. Without cors_origins it does nothing.
func (h *Handler) CORS(c *fiber.Ctx) error {
	if len(h.cors.origins) == 0 {
		return c.Next()
	}
	methods := corsMethods(c.Path())
	if methods == "" {
		return c.Next()
	}
	c.Vary(fiber.HeaderOrigin)
	origin := c.Get(fiber.HeaderOrigin)
	allowed := origin != "" && h.cors.origins[origin]
	preflight := c.Method() == fiber.MethodOptions && c.Get(fiber.HeaderAccessControlRequestMethod) != ""
	if origin != "" && !allowed {
		h.log.Info("cors: origin not in identity_server.cors_origins, no grant", "origin", logOrigin(origin),
			"preflight", preflight, "route", c.Path(), "request_id", fiberid.Of(c))
	}
	if preflight {
		c.Vary(fiber.HeaderAccessControlRequestMethod, fiber.HeaderAccessControlRequestHeaders)
		if !allowed {
			return c.Next()
		}
		c.Set(fiber.HeaderAccessControlAllowOrigin, origin)
		c.Set(fiber.HeaderAccessControlAllowMethods, methods)
		c.Set(fiber.HeaderAccessControlAllowHeaders, "Authorization, Content-Type")
		c.Set(fiber.HeaderAccessControlMaxAge, corsMaxAge)
		return c.SendStatus(fiber.StatusNoContent)
	}
	if allowed {
		grant(c, origin)
	}
	return c.Next()
}

// maxLoggedOrigin bounds the origin a refusal logs (the header is the client's to fill).
const maxLoggedOrigin = 200

// logOrigin is the Origin header as logged: cut at maxLoggedOrigin bytes (the log handler
// quotes and escapes it).
func logOrigin(origin string) string {
	if len(origin) > maxLoggedOrigin {
		return origin[:maxLoggedOrigin] + "..."
	}
	return origin
}

// grant lets origin read the answer.
func grant(c *fiber.Ctx, origin string) {
	c.Set(fiber.HeaderAccessControlAllowOrigin, origin)
	c.Set(fiber.HeaderAccessControlExposeHeaders, "WWW-Authenticate, X-Request-ID, Retry-After")
}

// GrantError gives an error answer of the identity server's routes the grant CORS would have
// given it (Vary: Origin, and the grant for a listed origin). The server's error handler calls
// it for every error, since some are answered before any route or middleware runs (a body over
// server.body_limit, a Content-Encoding that does not decode, an unknown method): without it a
// page would see a network failure instead of the error. Preflights are left alone.
func (h *Handler) GrantError(c *fiber.Ctx) {
	if h == nil || len(h.cors.origins) == 0 || corsMethods(c.Path()) == "" ||
		(c.Method() == fiber.MethodOptions && c.Get(fiber.HeaderAccessControlRequestMethod) != "") {
		return
	}
	c.Vary(fiber.HeaderOrigin)
	if origin := c.Get(fiber.HeaderOrigin); origin != "" && h.cors.origins[origin] {
		grant(c, origin)
	}
}

// Path reports whether path is one of the identity server's, /identity or /public_identity,
// matched as the router matches (any case, with or without a trailing slash).
func Path(path string) bool { return corsMethods(path) != "" }

// corsMethods are the methods a preflight for path may use: those of /identity or
// /public_identity, matched as the router matches (any case, with or without a trailing
// slash), or "" for any other path. It compares without allocating.
func corsMethods(path string) string {
	path = strings.TrimSuffix(path, "/")
	switch {
	case strings.EqualFold(path, "/identity"):
		return "POST, PATCH"
	case strings.EqualFold(path, "/public_identity"):
		return "POST"
	}
	return ""
}
