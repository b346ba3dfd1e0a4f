package idserver

import (
	"crypto/sha256"
	"errors"
	"fmt"
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
	// tokenHash is the SHA-256 of identity_server.token; nil when no token is configured.
	tokenHash []byte
	log       *slog.Logger
}

// New makes the handler for the app appID, looked up in registry on each request (so an app
// created after start is served without a restart). HTTP metrics come from the server's
// middleware; reg is kept in the signature for handler-specific metrics.
func New(appID []byte, registry *apps.Registry, dir *directory.Directory, cfg config.IdentityServer, reg prometheus.Registerer, log *slog.Logger) *Handler {
	h := &Handler{appID: appID, apps: registry, dir: dir, log: log}
	if cfg.Token != "" {
		sum := sha256.Sum256([]byte(cfg.Token))
		h.tokenHash = sum[:]
	}
	return h
}

// app returns the served app. Its absence is a configuration problem, not the client's: 503
// with a message naming identity_server.app_id.
func (h *Handler) app() (apps.App, error) {
	a, err := h.apps.Get(h.appID)
	switch {
	case errors.Is(err, apps.ErrNotFound):
		return apps.App{}, apierr.ISAppUnavailable.New()
	case err != nil:
		return apps.App{}, apierr.Internal(fmt.Errorf("idserver: get app: %w", err))
	case len(a.Secret) == 0:
		return apps.App{}, apierr.ISAppUnavailable.Msg("identity server unavailable: idvault does not hold the secret of its app")
	}
	return a, nil
}

// request reads the email of the body, then finds the served app: bad input is reported
// before a configuration problem, so bad input never gets a 5xx.
func (h *Handler) request(c *fiber.Ctx) (apps.App, string, error) {
	e, err := email(c)
	if err != nil {
		return apps.App{}, "", err
	}
	a, err := h.app()
	return a, e, err
}

// dirError maps a directory error to the client's error.
func dirError(op string, err error) error {
	if errors.Is(err, directory.ErrUnknownUser) {
		return apierr.UnknownUser.New()
	}
	return apierr.Internal(fmt.Errorf("idserver: %s: %w", op, err))
}
