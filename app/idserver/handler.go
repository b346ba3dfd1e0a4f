package idserver

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gofiber/fiber/v2"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/idtoken"
	"github.com/idvault/idvault/app/requestid/fiberid"
	"github.com/idvault/idvault/store"
)

// Handler serves /identity and /public_identity.
type Handler struct {
	appID []byte
	apps  *apps.Registry
	dir   *directory.Directory
	// tokenHash is the SHA-256 of identity_server.token; nil when no token is configured.
	tokenHash []byte
	// idtokens checks ID tokens; nil when identity_server.oidc is off.
	idtokens *idtoken.Verifier
	// results counts ID-token outcomes by result; nil when OIDC is off.
	results *prometheus.CounterVec
	cors    cors
	issuer  string
	// newIDs limits the records one signed-in user creates (nil: OIDC off, or no limit);
	// newRefused counts its refusals.
	newIDs     *newIdentities
	newRefused prometheus.Counter
	log        *slog.Logger
}

// New makes the handler for the app appID, looked up in registry on each request (so an app
// created after start is served without a restart). HTTP metrics come from the server's
// middleware; reg holds the ID-token metrics when identity_server.oidc is on. Nothing is
// fetched from the OpenID provider until a token needs its keys.
func New(appID []byte, registry *apps.Registry, dir *directory.Directory, cfg config.IdentityServer, reg prometheus.Registerer, log *slog.Logger) *Handler {
	h := &Handler{appID: appID, apps: registry, dir: dir, log: log, cors: newCORS(cfg.CORSOrigins)}
	if cfg.Token != "" {
		sum := sha256.Sum256([]byte(cfg.Token))
		h.tokenHash = sum[:]
	}
	if cfg.OIDC.On() {
		h.issuer = cfg.OIDC.Issuer
		h.results = registerCounter(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idvault_identity_server_id_tokens_total",
			Help: "Requests to the identity server with an ID token, by result: ok, invalid, forbidden (another email), unverified (email not verified or absent), provider_unavailable.",
		}, []string{"result"}))
		for _, r := range []string{"ok", "invalid", "forbidden", "unverified", "provider_unavailable"} {
			h.results.WithLabelValues(r)
		}
		fetches := registerCounter(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idvault_identity_server_oidc_key_fetches_total",
			Help: "Fetches of the OpenID provider's discovery document and keys, by result (ok, failed).",
		}, []string{"result"}))
		for _, r := range []string{"ok", "failed"} { // at 0 from the start, as every labelled counter
			fetches.WithLabelValues(r)
		}
		h.newIDs = newNewIdentities(cfg.OIDC.NewIdentitiesPerUser, cfg.OIDC.NewIdentitiesWindow)
		h.newRefused = registerCounter(reg, prometheus.NewCounter(prometheus.CounterOpts{
			Name: "idvault_identity_server_new_identities_refused_total",
			Help: "POST /public_identity requests refused because the ID token's user created identity_server.oidc.new_identities_per_user new identities in its window.",
		}))
		h.idtokens = idtoken.New(cfg.OIDC, idtoken.Options{
			Fetches: func(result string) { fetches.WithLabelValues(result).Inc() }, Logger: log,
		})
	}
	return h
}

// OIDCIssuer is identity_server.oidc.issuer when ID tokens are accepted, "" otherwise.
func (h *Handler) OIDCIssuer() string { return h.issuer }

// registerCounter registers c, or returns the one already registered under its name.
func registerCounter[C prometheus.Collector](reg prometheus.Registerer, c C) C {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing
			}
		}
	}
	return c
}

// count records an ID-token outcome.
func (h *Handler) count(result string) {
	if h.results != nil {
		h.results.WithLabelValues(result).Inc()
	}
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

// request reads the email of the body, checks that an ID token may ask for it (own: only its
// own email), then finds the served app: bad input is reported before a configuration
// problem, so bad input never gets a 5xx.
func (h *Handler) request(c *fiber.Ctx, own bool) (apps.App, string, error) {
	e, err := email(c)
	if tokenEmail, byToken := c.Locals(tokenEmailKey).(string); byToken {
		if err == nil && own && e != tokenEmail {
			h.count("forbidden")
			h.log.Info("id token refused for another email", "request_id", fiberid.Of(c))
			return apps.App{}, "", apierr.Forbidden.New()
		}
		h.count("ok")
	}
	if err != nil {
		return apps.App{}, "", err
	}
	a, err := h.app()
	return a, e, err
}

// dirError maps a directory error to the client's error. The served app deleted while the
// request ran answers as the next request would: identity_server_app_unavailable.
func dirError(op string, err error) error {
	switch {
	case errors.Is(err, directory.ErrUnknownUser):
		return apierr.UnknownUser.New()
	case errors.Is(err, store.ErrAppDeleted):
		return apierr.ISAppUnavailable.Wrap(err)
	}
	return apierr.Internal(fmt.Errorf("idserver: %s: %w", op, err))
}
