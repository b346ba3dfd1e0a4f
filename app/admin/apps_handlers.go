package admin

import (
	"encoding/json"
	"errors"
	"time"

	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
	"idvault/app/apps"
	"idvault/store"
)

// AppView is an app as the admin API shows it: never its secret or its auth token.
type AppView struct {
	ID                  string    `json:"id"`
	URLID               string    `json:"url_id"`
	Name                string    `json:"name"`
	Test                bool      `json:"test"`
	Declared            bool      `json:"declared"`
	LegacyErrors        bool      `json:"legacy_errors"`
	RegisteredUsersOnly bool      `json:"registered_users_only"`
	CreatedAt           time.Time `json:"created_at,omitzero"`
	UpdatedAt           time.Time `json:"updated_at,omitzero"`
}

// ViewOf converts an app to its public view.
func ViewOf(a apps.App) AppView {
	return AppView{
		ID: apps.FormatID(a.ID), URLID: apps.URLID(a.ID), Name: a.Name, Test: a.Test, Declared: a.Declared,
		LegacyErrors: a.Options.LegacyErrors, RegisteredUsersOnly: a.Options.RegisteredUsersOnly,
		CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	}
}

// CreateRequest is the body of POST /admin/apps.
type CreateRequest struct {
	Name                string `json:"name"`
	Test                bool   `json:"test"`
	LegacyErrors        bool   `json:"legacy_errors"`
	RegisteredUsersOnly bool   `json:"registered_users_only"`
}

// CreateResponse carries the only copy of the app secret and auth token ever shown.
type CreateResponse struct {
	App       AppView `json:"app"`
	AppSecret string  `json:"app_secret"`
	AuthToken string  `json:"auth_token"`
}

// CreateApp: POST /admin/apps → 201 CreateResponse.
func (h *Handler) CreateApp(c *fiber.Ctx) error {
	var req CreateRequest
	if err := json.Unmarshal(c.Body(), &req); err != nil {
		return apierr.InvalidBody.Msg("body must be a JSON object with a string name")
	}
	created, err := h.apps.Create(req.Name, req.Test, store.AppOptions{
		LegacyErrors: req.LegacyErrors, RegisteredUsersOnly: req.RegisteredUsersOnly,
	})
	if errors.Is(err, apps.ErrName) {
		return apierr.InvalidBody.Msg("name must be 1 to 100 printable characters")
	}
	if err != nil {
		return apierr.Internal(err)
	}
	return c.Status(fiber.StatusCreated).JSON(CreateResponse{
		App: ViewOf(created.App), AppSecret: secretText(created.App.Secret), AuthToken: created.AuthToken,
	})
}

// ListApps: GET /admin/apps → {"apps": [...]}.
func (h *Handler) ListApps(c *fiber.Ctx) error {
	list, err := h.apps.List()
	if err != nil {
		return apierr.Internal(err)
	}
	views := make([]AppView, 0, len(list))
	for _, a := range list {
		views = append(views, ViewOf(a))
	}
	return c.JSON(fiber.Map{"apps": views})
}

// ShowApp: GET /admin/apps/:app_id → {"app": {...}}.
func (h *Handler) ShowApp(c *fiber.Ctx) error {
	a, err := h.find(c)
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"app": ViewOf(a)})
}

// RotateToken: POST /admin/apps/:app_id/rotate-token → {"app": {...}, "auth_token": "..."}.
func (h *Handler) RotateToken(c *fiber.Ctx) error {
	a, err := h.find(c)
	if err != nil {
		return err
	}
	token, err := h.apps.RotateToken(a.ID)
	if err != nil {
		return mapAppErr(err)
	}
	if a, err = h.apps.Get(a.ID); err != nil {
		return mapAppErr(err)
	}
	return c.JSON(fiber.Map{"app": ViewOf(a), "auth_token": token})
}

// DeleteApp: DELETE /admin/apps/:app_id → {"deleted": "<id>"}.
func (h *Handler) DeleteApp(c *fiber.Ctx) error {
	a, err := h.find(c)
	if err != nil {
		return err
	}
	if err := h.apps.Delete(a.ID); err != nil {
		return mapAppErr(err)
	}
	return c.JSON(fiber.Map{"deleted": apps.FormatID(a.ID)})
}

func (h *Handler) find(c *fiber.Ctx) (apps.App, error) {
	id, err := apps.ParseID(c.Params("app_id"))
	if err != nil {
		return apps.App{}, apierr.InvalidAppID.New()
	}
	a, err := h.apps.Get(id)
	if err != nil {
		return apps.App{}, mapAppErr(err)
	}
	return a, nil
}

func mapAppErr(err error) error {
	switch {
	case errors.Is(err, apps.ErrNotFound):
		return apierr.AppNotFound.New()
	case errors.Is(err, apps.ErrDeclared):
		return apierr.AppIsDeclared.New()
	default:
		return apierr.Internal(err)
	}
}
