// Package fakeauth is the fake authentication server: private, disposable and public
// identities by email, for development and tests only.
package fakeauth

import (
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"idvault/app/apierr"
	"idvault/app/apps"
	"idvault/app/config"
	"idvault/app/directory"
)

// Handler serves /apps/:app_id/... .
type Handler struct {
	apps *apps.Registry
	dir  *directory.Directory
	cfg  config.FakeAuth
	log  *slog.Logger
}

// New makes the handler.
func New(registry *apps.Registry, dir *directory.Directory, cfg config.FakeAuth, reg prometheus.Registerer, log *slog.Logger) *Handler {
	return &Handler{apps: registry, dir: dir, cfg: cfg, log: log}
}

var errTODO = apierr.InternalError.Msg("not implemented yet")

// PrivateIdentity: GET /apps/:app_id/private_identity?email=E.
func (h *Handler) PrivateIdentity(c *fiber.Ctx) error { return errTODO }

// DisposablePrivateIdentity: GET /apps/:app_id/disposable_private_identity.
func (h *Handler) DisposablePrivateIdentity(c *fiber.Ctx) error { return errTODO }

// PublicIdentities: GET /apps/:app_id/public_identities?emails=E1,E2.
func (h *Handler) PublicIdentities(c *fiber.Ctx) error { return errTODO }

// Register: PUT /apps/:app_id/private_identity?email=E.
func (h *Handler) Register(c *fiber.Ctx) error { return errTODO }
