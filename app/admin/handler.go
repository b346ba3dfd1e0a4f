// Package admin is the admin HTTP API under /admin/: app management and hot backups, behind
// the admin token. It is the backend of the CLI (when a server holds the data file) and of a
// future web dashboard, so every answer is plain JSON.
package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"

	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
	"idvault/app/apps"
	"idvault/store"
)

// Backuper makes a verified copy of the data file to stream.
type Backuper interface {
	Snapshot() (*store.Snapshot, error)
}

// Handler serves /admin/.
type Handler struct {
	apps      *apps.Registry
	backup    Backuper
	tokenHash [sha256.Size]byte
	hasToken  bool
}

// New makes the admin handler. With an empty token every admin route is refused.
func New(registry *apps.Registry, backup Backuper, token string) *Handler {
	return &Handler{apps: registry, backup: backup, tokenHash: sha256.Sum256([]byte(token)), hasToken: token != ""}
}

// Authenticate requires "Authorization: Bearer <admin token>" (constant-time comparison of
// SHA-256 digests, so neither the length nor the content leaks through timing).
func (h *Handler) Authenticate(c *fiber.Ctx) error {
	if !h.hasToken {
		return apierr.AdminDisabled.New()
	}
	auth := c.Get(fiber.HeaderAuthorization)
	token, ok := strings.CutPrefix(auth, "Bearer ")
	got := sha256.Sum256([]byte(strings.TrimSpace(token)))
	if !ok || subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) != 1 {
		return apierr.AdminUnauthorized.New()
	}
	return c.Next()
}
