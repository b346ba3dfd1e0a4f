package console

import (
	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
)

func (h *Handler) loginPage(c *fiber.Ctx) error {
	if h.sessions.get(c.Cookies(cookieName)) != nil {
		return c.Redirect("/console/apps", fiber.StatusSeeOther)
	}
	return h.render(c, fiber.StatusOK, "login", page{Title: "Sign in"})
}

// login checks the admin token with the admin API's own check and starts a session. The
// token is used once, here; the browser keeps only the session cookie.
func (h *Handler) login(c *fiber.Ctx) error {
	if err := h.d.Admin.CheckToken(c.FormValue("token")); err != nil {
		h.d.Logger.Warn("console: sign-in refused", "ip", c.IP())
		msg := "Wrong admin token."
		if e := apierr.As(err); e != nil && e.Code == apierr.AdminDisabled {
			msg = "The admin API has no token configured, so nobody can sign in."
		}
		return h.render(c, fiber.StatusUnauthorized, "login", page{Title: "Sign in", Error: msg})
	}
	if old := c.Cookies(cookieName); old != "" {
		h.sessions.delete(old) // a fresh ID at each sign-in (no session fixation)
	}
	id, _ := h.sessions.create()
	h.setCookie(c, id, h.d.SessionTTL)
	h.d.Logger.Info("console: signed in", "ip", c.IP())
	return c.Redirect("/console/apps", fiber.StatusSeeOther)
}

func (h *Handler) logout(c *fiber.Ctx) error {
	h.sessions.delete(c.Cookies(cookieName))
	h.setCookie(c, "", 0)
	return c.Redirect("/console/login", fiber.StatusSeeOther)
}
