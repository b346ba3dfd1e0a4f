package fakeauth

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/directory"
)

// DefaultMaxEmails is the list limit of public_identities when the config leaves it at zero.
const DefaultMaxEmails = 100

// Handler serves /apps/:app_id/... .
type Handler struct {
	apps      *apps.Registry
	dir       *directory.Directory
	maxEmails int
	log       *slog.Logger
}

// New makes the handler. HTTP metrics come from the server's middleware; reg is kept in the
// signature for handler-specific metrics.
func New(registry *apps.Registry, dir *directory.Directory, cfg config.FakeAuth, reg prometheus.Registerer, log *slog.Logger) *Handler {
	maxEmails := cfg.MaxEmails
	if maxEmails <= 0 {
		maxEmails = DefaultMaxEmails
	}
	return &Handler{apps: registry, dir: dir, maxEmails: maxEmails, log: log}
}

// MaxEmails is the most emails one public_identities request may list (fakeauth.max_emails);
// the server sizes its request-header buffer from it.
func (h *Handler) MaxEmails() int { return h.maxEmails }

// app returns the app named by the :app_id path parameter, checked for fake authentication:
// it must exist, be in test mode, and idvault must hold its secret.
func (h *Handler) app(c *fiber.Ctx) (apps.App, error) {
	id, err := apps.ParseID(c.Params("app_id"))
	if err != nil {
		return apps.App{}, apierr.InvalidAppID.New()
	}
	a, err := h.apps.Get(id)
	switch {
	case errors.Is(err, apps.ErrNotFound):
		return apps.App{}, apierr.AppNotFound.New()
	case err != nil:
		return apps.App{}, apierr.Internal(fmt.Errorf("fakeauth: get app: %w", err))
	case !a.Test:
		return apps.App{}, apierr.AppIsNotTest.Msg("this app is not in test mode: fake authentication serves test-mode apps only")
	case len(a.Secret) == 0:
		return apps.App{}, apierr.AppNoSecret.New()
	}
	return a, nil
}
