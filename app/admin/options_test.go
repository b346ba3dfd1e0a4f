package admin_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/config"
)

// PATCH changes only the options it names; the change is stored and shows in the app's view.
func TestAdminUpdateOptions(t *testing.T) {
	t.Parallel()
	env, do := setup(t)
	r := do(http.MethodPost, "/admin/apps", map[string]any{"name": "opts", "test": true, "legacy_errors": true})
	require.Equal(t, http.StatusCreated, r.Status)
	var created admin.CreateResponse
	r.JSON(t, &created)

	r = do(http.MethodPatch, "/admin/apps/"+created.App.URLID, map[string]any{"registered_users_only": true})
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	var got struct{ App admin.AppView }
	r.JSON(t, &got)
	require.True(t, got.App.RegisteredUsersOnly)
	require.True(t, got.App.LegacyErrors, "an option not named keeps its value")

	r = do(http.MethodPatch, "/admin/apps/"+created.App.URLID, map[string]any{"legacy_errors": false})
	require.Equal(t, http.StatusOK, r.Status)
	id, err := apps.ParseID(created.App.ID)
	require.NoError(t, err)
	stored, err := env.Apps.Get(id)
	require.NoError(t, err)
	require.False(t, stored.Options.LegacyErrors)
	require.True(t, stored.Options.RegisteredUsersOnly)
	require.True(t, apps.CheckToken(stored, created.AuthToken), "the auth token is untouched")

	for name, body := range map[string]any{"unknown field": map[string]any{"test": false}, "not a bool": map[string]any{"legacy_errors": "yes"}, "not json": "{"} {
		r = do(http.MethodPatch, "/admin/apps/"+created.App.URLID, body)
		require.Equal(t, http.StatusBadRequest, r.Status, name)
		require.Equal(t, "invalid_body", r.ErrorCode(t), name)
	}
}

func TestAdminUpdateRefusesDeclaredApps(t *testing.T) {
	t.Parallel()
	secret := "cTMoGGUKhwN47ypq4xAXAtVkNWeyUtMltQnYwJhxWYSvqjPVGmXd2wwa7y17QtPTZhn8bxb015CZC/e4ZI7+MQ=="
	_, do := setup(t, config.DeclaredApp{Name: "declared", Secret: secret, AuthToken: "declared-token-0123456789", Test: true})
	r := do(http.MethodPatch, "/admin/apps/tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4", map[string]any{"legacy_errors": true})
	require.Equal(t, http.StatusConflict, r.Status)
	require.Equal(t, "app_is_declared", r.ErrorCode(t))
}
