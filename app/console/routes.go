package console

import (
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/filesystem"

	"github.com/idvault/idvault/app/clientip"
)

// csp allows the console's own CSS, script and forms only: no inline script or style, no
// framing, nothing from elsewhere.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

// Register mounts the console on r (the /console group).
func (h *Handler) Register(r fiber.Router) {
	r.Use(securityHeaders)
	static := filesystem.New(filesystem.Config{Root: http.FS(h.static), MaxAge: 3600})
	r.Use("/static", func(c *fiber.Ctx) error {
		// A directory (/console/static/) is refused by the middleware with a bare 403, which
		// the error handler would answer as a JSON invalid_body: it is the console's 404 page.
		if err := static(c); err != nil {
			if fe := (*fiber.Error)(nil); errors.As(err, &fe) && fe.Code == fiber.StatusForbidden {
				return h.notFound(c)
			}
			return err
		}
		return nil
	})
	r.Get("/", h.home)
	r.Get("/login", h.loginPage)
	r.Post("/login", h.sameOrigin, h.login)

	// Everything below needs a session; POSTs also need its CSRF token.
	r.Post("/logout", h.endedSession, h.signedIn, h.logout)
	r.Get("/apps", h.signedIn, h.appsPage)
	r.Post("/apps", h.signedIn, h.createApp)
	r.Get("/apps/:app_id", h.signedIn, h.appPage)
	r.Get("/apps/:app_id/secret", h.signedIn, fetchedHere, h.revealPage)
	r.Post("/apps/:app_id/options", h.signedIn, h.updateOptions)
	r.Post("/apps/:app_id/rotate", h.signedIn, h.rotateToken)
	r.Get("/apps/:app_id/delete", h.signedIn, h.deletePage)
	r.Post("/apps/:app_id/delete", h.signedIn, h.deleteApp)
	r.Get("/server", h.signedIn, h.serverPage)
	r.Get("/backup", h.signedIn, fetchedHere, h.backup)
	r.Get("/api", h.signedIn, h.apiPage)
	r.Use(h.notFound)
}

func securityHeaders(c *fiber.Ctx) error {
	c.Set("Content-Security-Policy", csp)
	c.Set("X-Content-Type-Options", "nosniff")
	c.Set("Referrer-Policy", "same-origin") // "no-referrer" would make Chromium send Origin: null on our own forms
	c.Set("X-Frame-Options", "DENY")
	if !strings.HasPrefix(c.Path(), "/console/static/") {
		c.Set(fiber.HeaderCacheControl, "no-store")
	}
	return c.Next()
}

// sameOrigin refuses a POST sent by another site: its Origin (or, without one, its Referer)
// must be this server. Browsers send Origin on every POST; a client without either (curl) has
// no cookies to abuse.
func (h *Handler) sameOrigin(c *fiber.Ctx) error {
	if !h.fromHere(c) {
		return forbidden(c, "This form was sent from another site; it was refused.")
	}
	return c.Next()
}

// fetchedHere guards the GETs that do something (the secret page uses up its secret; a backup
// writes a snapshot of the whole data file): a browser says in Sec-Fetch-Site who made the
// request, and one made by another site's page is refused. "same-site" is refused too: the
// SameSite=Strict cookie goes with requests from any port of the same host, so a page served
// on localhost:3000 could otherwise have the signed-in browser fetch /console/backup (into an
// image, unread but written to disk each time) as often as it likes. A link followed from the
// console (same-origin), an address typed or a bookmark (none) and a client that sends no
// such header pass.
func fetchedHere(c *fiber.Ctx) error {
	switch c.Get("Sec-Fetch-Site") {
	case "", "same-origin", "none":
		return c.Next()
	}
	return forbidden(c, "This page was requested by another site; it was refused.")
}

// fromHere reports whether the request's Origin (or Referer) names this console: the Host the
// request came with, or, behind a trusted proxy, the X-Forwarded-Host it says the browser used
// (a proxy that passes the request on to idvault's own address, as nginx does by default,
// would otherwise have every form refused, sign-in included).
func (h *Handler) fromHere(c *fiber.Ctx) bool {
	src := c.Get(fiber.HeaderOrigin)
	if src == "null" {
		return false // an opaque origin (sandboxed frame, data: URL) is never this console
	}
	if src == "" {
		src = c.Get(fiber.HeaderReferer)
	}
	if src == "" {
		return true
	}
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return false
	}
	if u.Host == c.Hostname() {
		return true
	}
	fwd, ok := h.forwardedHost(c)
	return ok && u.Host == fwd
}

// forwardedHost is the first X-Forwarded-Host of a request from a trusted proxy.
func (h *Handler) forwardedHost(c *fiber.Ctx) (string, bool) {
	if !h.fromTrustedProxy(c) {
		return "", false
	}
	host, _, _ := strings.Cut(c.Get(fiber.HeaderXForwardedHost), ",")
	host = strings.TrimSpace(host)
	return host, host != "" && plainHost(host)
}

// plainHost reports whether host is a host name or IP literal with an optional port, nothing
// else: it is written into the shell commands of the "Try it" snippets.
func plainHost(host string) bool {
	for _, r := range host {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune(".-:[]", r)) {
			return false
		}
	}
	return true
}

// baseURL is the console's address as the browser reached it (scheme and host, no path): the
// "Try it" commands use it. Behind a trusted TLS proxy it is https and the forwarded host.
func (h *Handler) baseURL(c *fiber.Ctx) string {
	scheme, host := "http", c.Hostname()
	if h.overTLS(c) {
		scheme = "https"
	}
	if fwd, ok := h.forwardedHost(c); ok {
		host = fwd
	}
	return scheme + "://" + host
}

// signedIn requires a live session (a GET without one goes to the sign-in page) and, for a
// POST, the session's CSRF token in the form and a same-origin request.
func (h *Handler) signedIn(c *fiber.Ctx) error {
	id := c.Cookies(cookieName)
	sess := h.sessions.get(id)
	if sess == nil {
		if c.Method() == fiber.MethodGet {
			return c.Redirect("/console/login", fiber.StatusSeeOther)
		}
		return h.render(c, fiber.StatusUnauthorized, "error", page{Title: "Signed out",
			Error: "You are not signed in (or your session expired). Sign in and try again."})
	}
	c.Locals("session", sess)
	c.Locals("session_id", id)
	if c.Method() == fiber.MethodPost {
		if !h.fromHere(c) {
			return forbidden(c, "This form was sent from another site; it was refused.")
		}
		if !csrfOK(sess, formValue(c, "csrf")) {
			return h.render(c, fiber.StatusForbidden, "error", page{Title: "Refused", CSRF: sess.csrf, SignedIn: true,
				Error: "This form is missing its security token (CSRF check failed), so nothing was changed. Reload the page and try again."})
		}
	}
	return c.Next()
}

// endedSession lets a sign-out without a live session (it expired, or the server restarted)
// succeed: the cookie is dropped and the sign-in page follows. There is nothing for a CSRF
// check to protect.
func (h *Handler) endedSession(c *fiber.Ctx) error {
	if h.sessions.get(c.Cookies(cookieName)) != nil {
		return c.Next()
	}
	h.setCookie(c, "", 0)
	return c.Redirect("/console/login", fiber.StatusSeeOther)
}

func forbidden(c *fiber.Ctx, msg string) error {
	c.Set(fiber.HeaderContentType, fiber.MIMETextPlainCharsetUTF8)
	return c.Status(fiber.StatusForbidden).SendString(msg)
}

func sessionOf(c *fiber.Ctx) *session {
	s, _ := c.Locals("session").(*session)
	return s
}

func (h *Handler) setCookie(c *fiber.Ctx, value string, maxAge time.Duration) {
	ck := &fiber.Cookie{
		Name: cookieName, Value: value, Path: "/console", HTTPOnly: true, SameSite: fiber.CookieSameSiteStrictMode,
		Secure: h.overTLS(c),
	}
	if maxAge > 0 {
		ck.MaxAge = int(maxAge.Seconds())
	} else {
		ck.MaxAge = -1
		ck.Expires = time.Unix(1, 0)
	}
	c.Cookie(ck)
}

// overTLS reports whether the browser reached the console over TLS: directly, or through a
// trusted proxy that says so in X-Forwarded-Proto.
func (h *Handler) overTLS(c *fiber.Ctx) bool {
	if c.Context().IsTLS() {
		return true
	}
	return strings.EqualFold(c.Get(fiber.HeaderXForwardedProto), "https") && h.fromTrustedProxy(c)
}

// fromTrustedProxy reports whether the TCP peer is one of server.trusted_proxies.
func (h *Handler) fromTrustedProxy(c *fiber.Ctx) bool {
	peer, ok := netip.AddrFromSlice(c.Context().RemoteIP())
	return ok && clientip.Proxies(h.d.TrustedProxies).Trusted(peer.Unmap())
}

func (h *Handler) home(c *fiber.Ctx) error {
	if h.sessions.get(c.Cookies(cookieName)) != nil {
		return c.Redirect("/console/apps", fiber.StatusSeeOther)
	}
	return c.Redirect("/console/login", fiber.StatusSeeOther)
}

func (h *Handler) notFound(c *fiber.Ctx) error {
	sess := h.sessions.get(c.Cookies(cookieName))
	p := page{Title: "Not found", Error: "There is no such page in the console."}
	if sess != nil {
		p.SignedIn, p.CSRF = true, sess.csrf
	}
	return h.render(c, fiber.StatusNotFound, "error", p)
}

// formValue is a field of the form in the request body (application/x-www-form-urlencoded, as
// every console form is sent). Unlike fiber's FormValue it never reads the query string, so an
// admin token or CSRF token put in a URL (where proxies, history and Referer keep it) is not
// taken, and a link cannot fill in a form.
func formValue(c *fiber.Ctx, name string) string {
	return string(c.Request().PostArgs().Peek(name))
}
