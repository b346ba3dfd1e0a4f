package admin

import (
	"errors"
	"strings"
	"time"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/appname"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/store"
)

// The service functions below are the admin API's one implementation. The HTTP handlers
// (apps_handlers.go) and the web console (app/console) both call them, so a rule lives in one
// place. Every error they return is an *apierr.Error.

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

// UpdateRequest is the body of PATCH /admin/apps/:app_id: the options to change (an absent
// field keeps its value).
type UpdateRequest struct {
	LegacyErrors        *bool `json:"legacy_errors"`
	RegisteredUsersOnly *bool `json:"registered_users_only"`
}

// RotateResponse carries the new auth token, shown once.
type RotateResponse struct {
	App       AppView `json:"app"`
	AuthToken string  `json:"auth_token"`
}

// List returns every app, declared and stored, ordered by name.
func (h *Handler) List() ([]AppView, error) {
	list, err := h.apps.List()
	if err != nil {
		return nil, apierr.Internal(err)
	}
	views := make([]AppView, 0, len(list))
	for _, a := range list {
		views = append(views, ViewOf(a))
	}
	return views, nil
}

// Get returns the app whose ID (any base64 form) is rawID.
func (h *Handler) Get(rawID string) (AppView, error) {
	a, err := h.find(rawID)
	if err != nil {
		return AppView{}, err
	}
	return ViewOf(a), nil
}

// Create makes an app with a fresh secret and auth token.
func (h *Handler) Create(req CreateRequest) (CreateResponse, error) {
	created, err := h.apps.Create(req.Name, req.Test, store.AppOptions{
		LegacyErrors: req.LegacyErrors, RegisteredUsersOnly: req.RegisteredUsersOnly,
	})
	if errors.Is(err, apps.ErrName) {
		return CreateResponse{}, apierr.InvalidBody.Msg("name %s", appname.Rule)
	}
	if errors.Is(err, apps.ErrNameTaken) {
		return CreateResponse{}, apierr.AppNameTaken.Msg("an app named %q already exists", strings.TrimSpace(req.Name))
	}
	if err != nil {
		return CreateResponse{}, apierr.Internal(err)
	}
	return CreateResponse{
		App: ViewOf(created.App), AppSecret: secretText(created.App.Secret), AuthToken: created.AuthToken,
	}, nil
}

// Rotate replaces the app's auth token; the old one stops working at once.
func (h *Handler) Rotate(rawID string) (RotateResponse, error) {
	a, err := h.find(rawID)
	if err != nil {
		return RotateResponse{}, err
	}
	token, err := h.apps.RotateToken(a.ID)
	if err != nil {
		return RotateResponse{}, mapAppErr(err)
	}
	if a, err = h.apps.Get(a.ID); err != nil {
		return RotateResponse{}, mapAppErr(err)
	}
	return RotateResponse{App: ViewOf(a), AuthToken: token}, nil
}

// Update changes the app's options named in req.
func (h *Handler) Update(rawID string, req UpdateRequest) (AppView, error) {
	a, err := h.find(rawID)
	if err != nil {
		return AppView{}, err
	}
	if a.Declared {
		return AppView{}, apierr.AppIsDeclared.New()
	}
	opts := a.Options
	if req.LegacyErrors != nil {
		opts.LegacyErrors = *req.LegacyErrors
	}
	if req.RegisteredUsersOnly != nil {
		opts.RegisteredUsersOnly = *req.RegisteredUsersOnly
	}
	a, err = h.apps.SetOptions(a.ID, opts)
	if err != nil {
		return AppView{}, mapAppErr(err)
	}
	return ViewOf(a), nil
}

// Delete removes the app with every record, code and counter kept for it, and returns its ID.
func (h *Handler) Delete(rawID string) (string, error) {
	a, err := h.find(rawID)
	if err != nil {
		return "", err
	}
	if err := h.apps.Delete(a.ID); err != nil {
		return "", mapAppErr(err)
	}
	return apps.FormatID(a.ID), nil
}

func (h *Handler) find(rawID string) (apps.App, error) {
	id, err := apps.ParseID(rawID)
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
