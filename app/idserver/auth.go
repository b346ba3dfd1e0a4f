package idserver

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
)

// Authenticate checks the bearer token when one is configured: every request then needs
// "Authorization: Bearer <token>" (scheme case-insensitive). The SHA-256 digests are compared
// in constant time, so neither the token nor its length leaks through timing.
//
// Without a token, a request must say Content-Type: application/json (415 otherwise): a
// cross-site HTML form can only send form or text types, so a web page cannot drive a tokenless
// identity server on the visitor's machine.
func (h *Handler) Authenticate(c *fiber.Ctx) error {
	if h.tokenHash == nil {
		if !isJSON(c.Get(fiber.HeaderContentType)) {
			return apierr.UnsupportedMediaType.New()
		}
		return c.Next()
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(c.Get(fiber.HeaderAuthorization)), " ")
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if !ok || !strings.EqualFold(scheme, "bearer") || subtle.ConstantTimeCompare(sum[:], h.tokenHash) != 1 {
		c.Set(fiber.HeaderWWWAuthenticate, `Bearer realm="idvault identity server"`)
		return apierr.Unauthorized.New()
	}
	return c.Next()
}

// isJSON reports whether a Content-Type header is application/json (parameters allowed).
func isJSON(contentType string) bool {
	media, _, _ := strings.Cut(contentType, ";")
	return strings.EqualFold(strings.TrimSpace(media), fiber.MIMEApplicationJSON)
}
