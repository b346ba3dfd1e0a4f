package console

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
)

func (h *Handler) loginPage(c *fiber.Ctx) error {
	if h.sessions.get(c.Cookies(cookieName)) != nil {
		return c.Redirect("/console/apps", fiber.StatusSeeOther)
	}
	return h.render(c, fiber.StatusOK, "login", page{Title: "Sign in"})
}

// login checks the admin token with the admin API's own check and starts a session. The
// token is used once, here; the browser keeps only the session cookie. Wrong tokens count
// against the same per-address throttle as the admin API's: a locked address gets a 429 page
// with Retry-After, even for the right token.
func (h *Handler) login(c *fiber.Ctx) error {
	// Trimmed as the admin API trims its header: a token pasted with a space or newline around
	// it is the token (none starts or ends with one), not a wrong guess counted by the throttle.
	if err := h.d.Admin.CheckToken(c, strings.TrimSpace(formValue(c, "token"))); err != nil {
		return h.loginRefused(c, err)
	}
	if old := c.Cookies(cookieName); old != "" {
		h.sessions.delete(old) // a fresh ID at each sign-in (no session fixation)
	}
	id, _ := h.sessions.create()
	h.setCookie(c, id, h.d.SessionTTL)
	h.d.Logger.Info("console: signed in", "ip", h.d.Admin.ClientOf(c))
	return c.Redirect("/console/apps", fiber.StatusSeeOther)
}

// loginRefused renders the sign-in page with what went wrong. A locked address is not logged
// here (the admin package logs each lock once), so a flood does not flood the log.
func (h *Handler) loginRefused(c *fiber.Ctx, err error) error {
	e := apierr.As(err)
	switch {
	case e != nil && e.Code == apierr.AdminLocked:
		wait := e.RetryAfter
		c.Set(fiber.HeaderRetryAfter, apierr.RetryAfterSeconds(wait))
		return h.render(c, fiber.StatusTooManyRequests, "login", page{Title: "Sign in", Error: fmt.Sprintf(
			"Too many wrong admin tokens were sent from your address, so sign-in is refused for %s (even with the right token). Try again after that.",
			waitText(wait))})
	case e != nil && e.Code == apierr.AdminDisabled:
		return h.render(c, fiber.StatusUnauthorized, "login", page{Title: "Sign in",
			Error: "The admin API has no token configured, so nobody can sign in."})
	}
	h.d.Logger.Warn("console: sign-in refused", "ip", h.d.Admin.ClientOf(c))
	return h.render(c, fiber.StatusUnauthorized, "login", page{Title: "Sign in", Error: "Wrong admin token."})
}

// waitText says a wait in whole minutes ("1 minute", "15 minutes"), or seconds under one.
func waitText(d time.Duration) string {
	if d < time.Minute {
		n := max(int(math.Ceil(d.Seconds())), 1)
		return plural(n, "second")
	}
	return plural(int(math.Ceil(d.Minutes())), "minute")
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

func (h *Handler) logout(c *fiber.Ctx) error {
	h.sessions.delete(c.Cookies(cookieName))
	h.setCookie(c, "", 0)
	return c.Redirect("/console/login", fiber.StatusSeeOther)
}
