package admin_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/store"
)

const token = "admin-token-for-tests-0123456789"

func setup(t *testing.T, declared ...config.DeclaredApp) (*apptest.Env, func(method, path string, body any, hdr ...string) apptest.Response) {
	env := apptest.New(t, declared...)
	app := env.Server(func(d *server.Deps) { d.Admin = admin.New(env.Apps, env.Store, token, admin.Options{}) })
	return env, func(method, path string, body any, hdr ...string) apptest.Response {
		if hdr == nil {
			hdr = []string{"Authorization", "Bearer " + token}
		}
		return apptest.Do(t, app, method, path, body, hdr...)
	}
}

func TestAdminNeedsTheToken(t *testing.T) {
	t.Parallel()
	_, do := setup(t)
	for name, hdr := range map[string][]string{
		"missing": {"X-Nothing", "x"}, "wrong": {"Authorization", "Bearer nope"},
		"not bearer": {"Authorization", token}, "prefix of token": {"Authorization", "Bearer " + token[:10]},
	} {
		r := do(http.MethodGet, "/admin/apps", nil, hdr...)
		require.Equal(t, http.StatusUnauthorized, r.Status, name)
		require.Equal(t, "invalid_admin_token", r.ErrorCode(t), name)
	}
}

// The scheme is case-insensitive (RFC 9110 11.1): a client sending "bearer" with the right
// token is let in, not told its token is wrong.
func TestAdminBearerSchemeInAnyCase(t *testing.T) {
	t.Parallel()
	_, do := setup(t)
	for _, scheme := range []string{"Bearer", "bearer", "BEARER"} {
		r := do(http.MethodGet, "/admin/apps", nil, "Authorization", scheme+" "+token)
		require.Equal(t, http.StatusOK, r.Status, scheme)
	}
	r := do(http.MethodGet, "/admin/apps", nil, "Authorization", "Basic "+token)
	require.Equal(t, http.StatusUnauthorized, r.Status, "another scheme")
}

func TestAdminWithoutConfiguredTokenRefusesEverything(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	app := env.Server(func(d *server.Deps) { d.Admin = admin.New(env.Apps, env.Store, "", admin.Options{}) })
	r := apptest.Do(t, app, http.MethodGet, "/admin/apps", nil, "Authorization", "Bearer ")
	require.Equal(t, http.StatusNotFound, r.Status)
	require.Equal(t, "admin_disabled", r.ErrorCode(t))
}

func TestAdminAppLifecycle(t *testing.T) {
	t.Parallel()
	env, do := setup(t)
	r := do(http.MethodPost, "/admin/apps", map[string]any{"name": "shop", "test": true, "legacy_errors": true})
	require.Equal(t, http.StatusCreated, r.Status, string(r.Body))
	var created admin.CreateResponse
	r.JSON(t, &created)
	require.True(t, created.App.Test)
	require.True(t, created.App.LegacyErrors)
	id, err := apps.ParseID(created.App.ID)
	require.NoError(t, err)
	stored, err := env.Apps.Get(id)
	require.NoError(t, err)
	require.Equal(t, created.AppSecret, apps.FormatID(stored.Secret))
	require.True(t, apps.CheckToken(stored, created.AuthToken))

	for _, path := range []string{"/admin/apps", "/admin/apps/" + created.App.URLID, "/admin/apps/" + strings.TrimRight(created.App.URLID, "=") + "%3D"} {
		r := do(http.MethodGet, path, nil)
		require.Equal(t, http.StatusOK, r.Status, path)
		require.Contains(t, string(r.Body), created.App.ID)
		require.NotContains(t, string(r.Body), created.AppSecret)
		require.NotContains(t, string(r.Body), created.AuthToken)
	}

	r = do(http.MethodPost, "/admin/apps/"+created.App.URLID+"/rotate-token", nil)
	require.Equal(t, http.StatusOK, r.Status)
	var rot struct {
		AuthToken string `json:"auth_token"`
	}
	r.JSON(t, &rot)
	stored, err = env.Apps.Get(id)
	require.NoError(t, err)
	require.False(t, apps.CheckToken(stored, created.AuthToken), "old token revoked")
	require.True(t, apps.CheckToken(stored, rot.AuthToken))

	r = do(http.MethodDelete, "/admin/apps/"+created.App.URLID, nil)
	require.Equal(t, http.StatusOK, r.Status)
	r = do(http.MethodGet, "/admin/apps/"+created.App.URLID, nil)
	require.Equal(t, http.StatusNotFound, r.Status)
	require.Equal(t, "app_not_found", r.ErrorCode(t))
}

func TestAdminErrors(t *testing.T) {
	t.Parallel()
	_, do := setup(t)
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"bad json", http.MethodPost, "/admin/apps", "{", 400, "invalid_body"},
		{"no name", http.MethodPost, "/admin/apps", map[string]any{"test": true}, 400, "invalid_body"},
		{"name not a string", http.MethodPost, "/admin/apps", map[string]any{"name": 5}, 400, "invalid_body"},
		{"bad id", http.MethodGet, "/admin/apps/zz", nil, 400, "invalid_app_id"},
		{"unknown id", http.MethodGet, "/admin/apps/" + strings.Repeat("A", 43), nil, 404, "app_not_found"},
		{"unknown route", http.MethodGet, "/admin/nothing", nil, 404, "not_found"},
		{"wrong method", http.MethodPut, "/admin/apps", nil, 405, "method_not_allowed"},
	}
	for _, c := range cases {
		r := do(c.method, c.path, c.body)
		require.Equal(t, c.status, r.Status, c.name)
		require.Equal(t, c.code, r.ErrorCode(t), c.name)
	}
}

// The admin API refuses what it does not understand instead of acting on part of it: a
// misspelt field on create would otherwise make a production app of one meant for tests.
func TestAdminBodiesAreStrict(t *testing.T) {
	t.Parallel()
	env, do := setup(t)
	created := do(http.MethodPost, "/admin/apps", map[string]any{"name": "kept"})
	require.Equal(t, http.StatusCreated, created.Status, string(created.Body))
	id := created.Map(t)["app"].(map[string]any)["url_id"].(string)
	cases := []struct {
		name, method, path, body, says string
	}{
		{"create, misspelt field", http.MethodPost, "/admin/apps", `{"name": "typo", "test_mode": true}`, `unknown field \"test_mode\"`},
		{"create, data after the object", http.MethodPost, "/admin/apps", `{"name": "twice"} {"name": "again"}`, "data after the JSON object"},
		{"create, long unknown field is not shown", http.MethodPost, "/admin/apps", `{"name": "x", "` + strings.Repeat("a", 500) + `": 1}`, `unknown field (a key that does not look like a field name, not shown)`},
		{"update, misspelt field", http.MethodPatch, "/admin/apps/" + id, `{"legacy_error": true}`, `unknown field \"legacy_error\"`},
		{"update, data after the object", http.MethodPatch, "/admin/apps/" + id, `{"legacy_errors": true}x`, "data after the JSON object"},
		{"create, a token as an unknown field", http.MethodPost, "/admin/apps", `{"name": "x", "od6dQj4yvmohFVm6W3rlCG8Sy19sKkz9sdsO7lLU55k": 1}`, `unknown field (a key that does not look like a field name, not shown)`},
		{"create, a code given twice", http.MethodPost, "/admin/apps", `{"name": "x", "10726118": 1, "10726118": 2}`, `field (a key that does not look like a field name, not shown) given twice`},
		{"create, a field twice", http.MethodPost, "/admin/apps", `{"name": "twice", "test": true, "test": false}`, `field \"test\" given twice`},
		{"create, a field twice in another case", http.MethodPost, "/admin/apps", `{"name": "twice", "test": true, "Test": false}`, `field \"Test\" given twice`},
		{"create, a field twice, once with a long s", http.MethodPost, "/admin/apps", `{"name": "twice", "teſt": true, "test": false}`, `field \"test\" given twice`},
		{"update, a field twice, once with a long s", http.MethodPatch, "/admin/apps/" + id, `{"registered_users_only": true, "regiſtered_users_only": false}`, `field (a key that does not look like a field name, not shown) given twice`},
		{"update, a field twice", http.MethodPatch, "/admin/apps/" + id, `{"legacy_errors": true, "legacy_errors": false}`, `field \"legacy_errors\" given twice`},
		{"create, empty body", http.MethodPost, "/admin/apps", ``, "the body is empty"},
		{"update, empty body", http.MethodPatch, "/admin/apps/" + id, ` `, "the body is empty"},
		{"update, nothing to change", http.MethodPatch, "/admin/apps/" + id, `{}`, "nothing to change"},
		{"update, only nulls", http.MethodPatch, "/admin/apps/" + id, `{"legacy_errors": null, "registered_users_only": null}`, "nothing to change"},
		{"delete with a body", http.MethodDelete, "/admin/apps/" + id, `{"confirm": false}`, "takes no body"},
		{"rotate with a body", http.MethodPost, "/admin/apps/" + id + "/rotate-token", `{"keep_old": true}`, "takes no body"},
	}
	for _, c := range cases {
		r := do(c.method, c.path, c.body)
		require.Equal(t, http.StatusBadRequest, r.Status, c.name)
		require.Equal(t, "invalid_body", r.ErrorCode(t), c.name)
		require.Contains(t, string(r.Body), c.says, c.name)
		require.NotContains(t, string(r.Body), strings.Repeat("a", 65), c.name)
	}
	// Nothing was created or changed by the refused requests.
	apps, err := env.Apps.List()
	require.NoError(t, err)
	require.Len(t, apps, 1)
	require.Equal(t, "kept", apps[0].Name)
	require.False(t, apps[0].Options.LegacyErrors)
}

func TestDeclaredAppsAreReadOnly(t *testing.T) {
	t.Parallel()
	secret := "cTMoGGUKhwN47ypq4xAXAtVkNWeyUtMltQnYwJhxWYSvqjPVGmXd2wwa7y17QtPTZhn8bxb015CZC/e4ZI7+MQ=="
	_, do := setup(t, config.DeclaredApp{Name: "declared", Secret: secret, AuthToken: "declared-token-0123456789", Test: true})
	const id = "tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4"
	r := do(http.MethodGet, "/admin/apps/"+id, nil)
	require.Equal(t, http.StatusOK, r.Status, string(r.Body))
	require.Contains(t, string(r.Body), `"declared":true`)
	require.Contains(t, string(r.Body), "tpoxyNzh0hU9G2i9agMvHyyd+pO6zGCjO9BfhrCLjd4=", "app ID derived from the declared secret")
	for _, m := range []struct{ method, path string }{{http.MethodPost, "/rotate-token"}, {http.MethodDelete, ""}} {
		r := do(m.method, "/admin/apps/"+id+m.path, nil)
		require.Equal(t, http.StatusConflict, r.Status)
		require.Equal(t, "app_is_declared", r.ErrorCode(t))
	}
}

func TestBackupEndpointStreamsAWorkingDataFile(t *testing.T) {
	t.Parallel()
	env, do := setup(t)
	c := env.CreateApp(t, true)
	r := do(http.MethodGet, "/admin/backup", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Contains(t, r.Header.Get("Content-Disposition"), "attachment")
	path := filepath.Join(t.TempDir(), "b.db")
	require.NoError(t, os.WriteFile(path, r.Body, 0o600))
	require.NoError(t, store.VerifyFile(path))
	require.False(t, bytes.Contains(r.Body, c.App.Secret), "secrets stay sealed in a backup")
	st, err := store.Open(store.Options{Path: path, MasterKey: env.MasterKey})
	require.NoError(t, err)
	defer st.Close()
	got, err := st.App(c.App.ID)
	require.NoError(t, err)
	require.Equal(t, c.App.Secret, got.Secret)
}
