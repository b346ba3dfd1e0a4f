// Package idserver is the reference identity server: permanent identities by email, public
// identities with provisional fallback, and registration, for one app.
package idserver

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"idvault/app/apierr"
	"idvault/app/apps"
	"idvault/app/config"
	"idvault/app/directory"
)

// Handler serves /identity and /public_identity.
type Handler struct {
	appID []byte
	apps  *apps.Registry
	dir   *directory.Directory
	cfg   config.IdentityServer
	log   *slog.Logger
}

// New makes the handler for the app appID, looked up in registry on each request (so an app
// created after start is served without a restart).
func New(appID []byte, registry *apps.Registry, dir *directory.Directory, cfg config.IdentityServer, reg prometheus.Registerer, log *slog.Logger) *Handler {
	return &Handler{appID: appID, apps: registry, dir: dir, cfg: cfg, log: log}
}

var errTODO = apierr.InternalError.Msg("not implemented yet")

// Authenticate checks the bearer token when one is configured.
func (h *Handler) Authenticate(c *fiber.Ctx) error { return c.Next() }

// Identity: POST /identity.
func (h *Handler) Identity(c *fiber.Ctx) error { return errTODO }

// Register: PATCH /identity.
func (h *Handler) Register(c *fiber.Ctx) error { return errTODO }

// PublicIdentity: POST /public_identity.
func (h *Handler) PublicIdentity(c *fiber.Ctx) error { return errTODO }
