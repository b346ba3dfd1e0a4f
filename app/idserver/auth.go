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
func (h *Handler) Authenticate(c *fiber.Ctx) error {
	if h.tokenHash == nil {
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
