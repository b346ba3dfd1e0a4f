// Package console is idvault's web console at /console/: server-rendered pages (html/template,
// embedded with the CSS and a few lines of JavaScript; no build step, nothing from a CDN) to
// manage apps and look at the server.
//
// Sign-in takes the admin token once; the browser then holds only a random session ID in an
// HttpOnly, SameSite=Strict cookie (Secure when the request came over TLS), never the token,
// never in a URL or in local storage. Sessions live in memory: a restart signs everyone out.
// Every form posts a per-session CSRF token, and a POST whose Origin is another site is refused.
// A strict Content-Security-Policy allows only the console's own CSS and script.
//
// Every change goes through the admin API's service functions (package admin), so the console
// and the HTTP admin API share one implementation. App secrets and auth tokens are shown once,
// on the page that follows their creation, and never again.
package console

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"log/slog"
	"net/netip"
	"time"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apierr"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Interface is one interface of the server as the server page shows it.
type Interface struct {
	Name    string
	On      bool
	Key     string // the config switch
	Routes  string
	Comment string
}

// Deps are what the console is built from.
type Deps struct {
	Admin *admin.Handler
	// Ready runs the readiness checks (the same as /readyz).
	Ready      func(ctx context.Context) (checks map[string]string, ready bool)
	Warnings   []string
	Interfaces []Interface
	// IdentityServerAppID is identity_server.app_id when the identity server is on.
	IdentityServerAppID string
	Version             string
	// DataFile is the path of the bbolt data file (its size is shown).
	DataFile string
	Logger   *slog.Logger
	// SessionTTL is how long a sign-in lasts (default 12 hours).
	SessionTTL time.Duration
	// TrustedProxies are the peers whose X-Forwarded-Proto and X-Forwarded-Host are believed
	// (a TLS proxy in front of idvault makes the session cookie Secure; the host it forwards
	// is the console's own for the same-origin check and the "Try it" commands).
	TrustedProxies []netip.Prefix
	// StoreError, when set, answers the store's errors as the API does (app/server: an app
	// deleted meanwhile, a damaged data file) on the error page.
	StoreError func(*apierr.Error) *apierr.Error
}

// Handler serves /console/.
type Handler struct {
	d        Deps
	pages    map[string]*template.Template
	sessions *sessions
	static   fs.FS
}

// New builds the console.
func New(d Deps) *Handler {
	if d.SessionTTL <= 0 {
		d.SessionTTL = 12 * time.Hour
	}
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	static, _ := fs.Sub(staticFS, "static")
	return &Handler{d: d, pages: parsePages(), sessions: newSessions(d.SessionTTL, maxSessions), static: static}
}
