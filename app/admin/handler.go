// Package admin is the admin HTTP API under /admin/: app management and hot backups, behind
// the admin token. It is the backend of the CLI (when a server holds the data file) and of a
// web console (app/console), so every answer is plain JSON.
//
// Wrong admin tokens are throttled per client address (throttle.go), the API and the console
// sign-in sharing one count: after admin.max_wrong_tokens wrong tokens within
// admin.wrong_token_window the address is refused, even with the right token, for
// admin.lock_duration (429 admin_locked with Retry-After).
package admin

import (
	"crypto/sha256"
	"crypto/subtle"
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/clientip"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/store"
)

// Backuper makes a verified copy of the data file to stream.
type Backuper interface {
	Snapshot() (*store.Snapshot, error)
}

// Options are the admin handler's settings beyond the token. The zero value takes the
// defaults of config.DefaultAdmin, no trusted proxy, no log and the real clock.
type Options struct {
	// MaxWrongTokens, WrongTokenWindow and LockDuration are the throttle (config admin.*); a
	// zero field takes its default.
	MaxWrongTokens   int
	WrongTokenWindow time.Duration
	LockDuration     time.Duration
	// TrustedProxies is server.trusted_proxies: the client of a request from one of them is
	// taken from X-Forwarded-For (package clientip). An entry that does not parse is skipped
	// (the config's validation reports it).
	TrustedProxies []string
	Logger         *slog.Logger
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Handler serves /admin/.
type Handler struct {
	apps      *apps.Registry
	backup    Backuper
	tokenHash [sha256.Size]byte
	hasToken  bool
	throttle  *throttle
	proxies   clientip.Proxies
	log       *slog.Logger
}

// New makes the admin handler. With an empty token every admin route is refused.
func New(registry *apps.Registry, backup Backuper, token string, o Options) *Handler {
	def := config.DefaultAdmin()
	if o.MaxWrongTokens <= 0 {
		o.MaxWrongTokens = def.MaxWrongTokens
	}
	if o.WrongTokenWindow <= 0 {
		o.WrongTokenWindow = def.WrongTokenWindow
	}
	if o.LockDuration <= 0 {
		o.LockDuration = def.LockDuration
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	proxies := clientip.ParseValid(o.TrustedProxies)
	return &Handler{
		apps: registry, backup: backup, tokenHash: sha256.Sum256([]byte(token)), hasToken: token != "",
		throttle: newThrottle(o.MaxWrongTokens, o.WrongTokenWindow, o.LockDuration, MaxTrackedClients, o.Now),
		proxies:  proxies, log: o.Logger.With("component", "admin"),
	}
}

// ClientOf is the client address of c as the throttle counts it (the TCP peer, or the
// forwarded client behind a trusted proxy), for logs.
func (h *Handler) ClientOf(c *fiber.Ctx) string { return h.proxies.Of(c).String() }

// Stats are the throttle's counts since start (for /metrics).
func (h *Handler) Stats() *ThrottleStats { return &h.throttle.stats }

// Authenticate requires "Authorization: Bearer <admin token>", the scheme in any case (RFC
// 9110 11.1: "bearer" is the same scheme, and the identity server reads it so too).
func (h *Handler) Authenticate(c *fiber.Ctx) error {
	scheme, token, ok := strings.Cut(strings.TrimSpace(c.Get(fiber.HeaderAuthorization)), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") {
		token = ""
	}
	if err := h.CheckToken(c, strings.TrimSpace(token)); err != nil {
		return err
	}
	return c.Next()
}

// CheckToken reports whether token, sent by the client of c, is the admin token: nil,
// AdminUnauthorized, AdminLocked (with RetryAfter) when the client sent too many wrong tokens
// lately, or AdminDisabled when no token is configured. It compares SHA-256 digests in
// constant time, so neither the length nor the content leaks through timing. An empty token
// is refused without counting as a guess. The console signs in with it, so both share the
// throttle.
func (h *Handler) CheckToken(c *fiber.Ctx, token string) error {
	if !h.hasToken {
		return apierr.AdminDisabled.New()
	}
	client := h.proxies.Of(c)
	right := false
	v := h.throttle.check(client, func() bool {
		got := sha256.Sum256([]byte(token))
		right = token != "" && subtle.ConstantTimeCompare(got[:], h.tokenHash[:]) == 1
		return token != "" && !right
	})
	if v.retryAfter > 0 {
		e := apierr.AdminLocked.New()
		e.RetryAfter = v.retryAfter
		return e
	}
	if v.lockedNow {
		h.log.Warn("admin: too many wrong admin tokens; address locked", "ip", client.String(),
			"shared_by_untracked_addresses", v.shared, "wrong_tokens", h.throttle.maxWrong, "lock", h.throttle.lock.String())
	}
	if !right {
		return apierr.AdminUnauthorized.New()
	}
	return nil
}
