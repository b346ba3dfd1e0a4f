// Package admin is the admin HTTP API under /admin/: app management and hot backups, behind
// the admin token. It is the backend of the CLI (when a server holds the data file) and of a
// web console (app/console), so every answer is plain JSON.
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

// Authenticate requires "Authorization: Bearer <admin token>".
func (h *Handler) Authenticate(c *fiber.Ctx) error {
	token, ok := strings.CutPrefix(c.Get(fiber.HeaderAuthorization), "Bearer ")
	if !ok {
		token = ""
	}
	if err := h.CheckToken(strings.TrimSpace(token)); err != nil {
		return err
	}
	return c.Next()
}

// CheckToken reports whether token is the admin token: nil, AdminUnauthorized, or
// AdminDisabled when no token is configured. It compares SHA-256 digests in constant time, so
// neither the length nor the content leaks through timing. The console signs in with it.
func (h *Handler) CheckToken(token string) error {
	if !h.hasToken {
		return apierr.AdminDisabled.New()
	}
	got := sha256.Sum256([]byte(token))
	if token == "" || subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) != 1 {
		return apierr.AdminUnauthorized.New()
	}
	return nil
}
