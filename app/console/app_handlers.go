package console

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apierr"
)

// The app pages. Each change calls one admin service function, the same the admin API's HTTP
// handlers call.

func (h *Handler) appsPage(c *fiber.Ctx) error {
	sess := sessionOf(c)
	list, err := h.d.Admin.List()
	if err != nil {
		return h.fail(c, err)
	}
	return h.render(c, fiber.StatusOK, "apps", page{Title: "Apps", Data: list, Flash: h.sessions.takeFlash(sess)})
}

func (h *Handler) createApp(c *fiber.Ctx) error {
	name := formValue(c, "name")
	created, err := h.d.Admin.Create(admin.CreateRequest{
		Name: name, Test: checked(c, "test"),
		LegacyErrors: checked(c, "legacy_errors"), RegisteredUsersOnly: checked(c, "registered_users_only"),
	})
	if e := apierr.As(err); e != nil && e.Code == apierr.AppNameTaken {
		// The form sent twice (a double click): the first post created the app, but the browser
		// followed the second, refused for the name. The first app's secret, which can never be
		// shown again, is still waiting in this session: show it rather than the refusal.
		if r := h.sessions.pendingCreation(sessionOf(c), strings.TrimSpace(name)); r != nil {
			return c.Redirect(appURL(r.App, "/secret"), fiber.StatusSeeOther)
		}
	}
	if err != nil {
		return h.fail(c, err)
	}
	h.sessions.setReveal(sessionOf(c), &reveal{App: created.App, AppSecret: created.AppSecret, AuthToken: created.AuthToken})
	h.d.Logger.Info("console: app created", "app_id", created.App.ID)
	return c.Redirect(appURL(created.App, "/secret"), fiber.StatusSeeOther)
}

// revealPage shows a new secret and token once: the session forgets them as the page renders.
func (h *Handler) revealPage(c *fiber.Ctx) error {
	r := h.sessions.takeReveal(sessionOf(c), strings.TrimRight(c.Params("app_id"), "="))
	if r == nil {
		return h.render(c, fiber.StatusGone, "error", page{Title: "Already shown",
			Error: "The secret and auth token were shown once and are gone. Rotate the token to get a new one (the app secret cannot be shown again)."})
	}
	return h.render(c, fiber.StatusOK, "secret", page{Title: "Shown once: " + r.App.Name, Data: r})
}

type appData struct {
	App      admin.AppView
	Base     string
	Snippets []snippet
}

func (h *Handler) appPage(c *fiber.Ctx) error {
	v, err := h.d.Admin.Get(c.Params("app_id"))
	if err != nil {
		return h.fail(c, err)
	}
	d := appData{App: v, Base: h.baseURL(c)}
	if v.Test {
		d.Snippets = h.snippets(v, d.Base)
	}
	return h.render(c, fiber.StatusOK, "app", page{Title: v.Name, Data: d, Flash: h.sessions.takeFlash(sessionOf(c))})
}

func (h *Handler) updateOptions(c *fiber.Ctx) error {
	legacy, registered := checked(c, "legacy_errors"), checked(c, "registered_users_only")
	v, err := h.d.Admin.Update(c.Params("app_id"), admin.UpdateRequest{LegacyErrors: &legacy, RegisteredUsersOnly: &registered})
	if err != nil {
		return h.fail(c, err)
	}
	h.sessions.setFlash(sessionOf(c), "Options saved.")
	return c.Redirect(appURL(v, ""), fiber.StatusSeeOther)
}

func (h *Handler) rotateToken(c *fiber.Ctx) error {
	r, err := h.d.Admin.Rotate(c.Params("app_id"))
	if err != nil {
		return h.fail(c, err)
	}
	h.sessions.setReveal(sessionOf(c), &reveal{App: r.App, AuthToken: r.AuthToken})
	h.d.Logger.Info("console: auth token rotated", "app_id", r.App.ID)
	return c.Redirect(appURL(r.App, "/secret"), fiber.StatusSeeOther)
}

func (h *Handler) deletePage(c *fiber.Ctx) error {
	v, err := h.d.Admin.Get(c.Params("app_id"))
	if err != nil {
		return h.fail(c, err)
	}
	return h.render(c, fiber.StatusOK, "delete", page{Title: "Delete " + v.Name, Data: v})
}

func (h *Handler) deleteApp(c *fiber.Ctx) error {
	v, err := h.d.Admin.Get(c.Params("app_id"))
	if err != nil {
		return h.fail(c, err)
	}
	if formValue(c, "confirm") != v.Name {
		return h.render(c, fiber.StatusBadRequest, "delete", page{Title: "Delete " + v.Name, Data: v,
			Error: "Type the app's name exactly to confirm; nothing was deleted."})
	}
	if _, err := h.d.Admin.Delete(c.Params("app_id")); err != nil {
		return h.fail(c, err)
	}
	h.d.Logger.Info("console: app deleted", "app_id", v.ID)
	h.sessions.setFlash(sessionOf(c), fmt.Sprintf("App %q deleted, with its identities and codes.", v.Name))
	return c.Redirect("/console/apps", fiber.StatusSeeOther)
}

// fail renders an admin API error on a page with its status and message.
func (h *Handler) fail(c *fiber.Ctx, err error) error {
	e := apierr.As(err)
	if e == nil {
		e = apierr.Internal(err)
	}
	if h.d.StoreError != nil {
		e = h.d.StoreError(e)
	}
	if e.Code.Status >= 500 {
		h.d.Logger.Error("console: request failed", "path", c.Route().Path, "err", e.Error())
	}
	return h.render(c, e.Code.Status, "error", page{Title: "Error", Error: e.Message, Code: e.Code.Name})
}

func checked(c *fiber.Ctx, name string) bool {
	v := formValue(c, name)
	return v == "on" || v == "true" || v == "1"
}

func appURL(v admin.AppView, suffix string) string {
	return "/console/apps/" + url.PathEscape(v.URLID) + suffix
}
