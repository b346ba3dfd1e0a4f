package admin

import (
	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
)

// The HTTP handlers of /admin/apps: each decodes the request, calls one service function
// (service.go) and encodes its answer.

// CreateApp: POST /admin/apps → 201 CreateResponse.
func (h *Handler) CreateApp(c *fiber.Ctx) error {
	var req CreateRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return apierr.InvalidBody.Msg("body must be a JSON object with a string name and optional booleans test, legacy_errors and registered_users_only: %s", err)
	}
	created, err := h.Create(req)
	if err != nil {
		return err
	}
	return c.Status(fiber.StatusCreated).JSON(created)
}

// ListApps: GET /admin/apps → {"apps": [...]}.
func (h *Handler) ListApps(c *fiber.Ctx) error {
	views, err := h.List()
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"apps": views})
}

// ShowApp: GET /admin/apps/:app_id → {"app": {...}}.
func (h *Handler) ShowApp(c *fiber.Ctx) error {
	v, err := h.Get(c.Params("app_id"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"app": v})
}

// UpdateApp: PATCH /admin/apps/:app_id with {"legacy_errors"?, "registered_users_only"?} →
// {"app": {...}}.
func (h *Handler) UpdateApp(c *fiber.Ctx) error {
	var req UpdateRequest
	if err := decodeStrict(c.Body(), &req); err != nil {
		return apierr.InvalidBody.Msg("body must be a JSON object with boolean legacy_errors and/or registered_users_only: %s", err)
	}
	if req.LegacyErrors == nil && req.RegisteredUsersOnly == nil {
		// {} (or nulls) would change nothing but the app's updated_at: a client that meant a
		// change it did not spell is told, not answered 200.
		return apierr.InvalidBody.Msg("body must set legacy_errors and/or registered_users_only (true or false): nothing to change")
	}
	v, err := h.Update(c.Params("app_id"), req)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"app": v})
}

// RotateToken: POST /admin/apps/:app_id/rotate-token → {"app": {...}, "auth_token": "..."}.
func (h *Handler) RotateToken(c *fiber.Ctx) error {
	if err := noBody(c.Body()); err != nil {
		return err
	}
	r, err := h.Rotate(c.Params("app_id"))
	if err != nil {
		return err
	}
	return c.JSON(r)
}

// DeleteApp: DELETE /admin/apps/:app_id → {"deleted": "<id>"}.
func (h *Handler) DeleteApp(c *fiber.Ctx) error {
	if err := noBody(c.Body()); err != nil {
		return err
	}
	id, err := h.Delete(c.Params("app_id"))
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"deleted": id})
}
