package fakeauth_test

import (
	"crypto/rand"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/app/server"
)

type errorCase struct {
	method, target string
	body           any
	status         int
	code           string
	message        string // a part the message must contain, if set
}

func TestErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	prod := f.env.CreateApp(t, false).App
	unknown := make([]byte, 32)
	_, _ = rand.Read(unknown)
	f.publicIdentities(t, "provisional-only@example.com")
	long := strings.Repeat("a", 250) + "@example.com"
	base := f.base

	for name, c := range map[string]errorCase{
		"app ID not base64":               {http.MethodGet, "/apps/bad-base-64/private_identity?email=a@example.com", nil, 400, "invalid_app_id", ""},
		"app ID base64 of 6 bytes":        {http.MethodGet, "/apps/deadbeef/public_identities?emails=a@example.com", nil, 400, "invalid_app_id", ""},
		"app ID on disposable":            {http.MethodGet, "/apps/bad-base-64/disposable_private_identity", nil, 400, "invalid_app_id", ""},
		"app ID on PUT":                   {http.MethodPut, "/apps/!!/private_identity?email=a@example.com", nil, 400, "invalid_app_id", ""},
		"unknown app":                     {http.MethodGet, "/apps/" + apps.URLID(unknown) + "/private_identity?email=a@example.com", nil, 404, "app_not_found", ""},
		"unknown app, disposable":         {http.MethodGet, "/apps/" + apps.URLID(unknown) + "/disposable_private_identity", nil, 404, "app_not_found", ""},
		"app not in test mode":            {http.MethodGet, "/apps/" + apps.URLID(prod.ID) + "/private_identity?email=a@example.com", nil, 403, "app_is_not_test", "test mode"},
		"not test mode, disposable":       {http.MethodGet, "/apps/" + apps.URLID(prod.ID) + "/disposable_private_identity", nil, 403, "app_is_not_test", ""},
		"not test mode, public":           {http.MethodGet, "/apps/" + apps.URLID(prod.ID) + "/public_identities?emails=a@example.com", nil, 403, "app_is_not_test", ""},
		"not test mode, PUT":              {http.MethodPut, "/apps/" + apps.URLID(prod.ID) + "/private_identity?email=a@example.com", nil, 403, "app_is_not_test", ""},
		"email missing":                   {http.MethodGet, base + "/private_identity", nil, 400, "invalid_email", "missing"},
		"email empty":                     {http.MethodGet, base + "/private_identity?email=", nil, 400, "invalid_email", "missing"},
		"email repeated":                  {http.MethodGet, base + "/private_identity?email=a@example.com&email=b@example.com", nil, 400, "invalid_email", "exactly one"},
		"email not an address":            {http.MethodGet, base + "/private_identity?email=not-an-email", nil, 400, "invalid_email", `"not-an-email"`},
		"email with display name":         {http.MethodGet, base + "/private_identity?email=Bob%20%3Cbob%40example.com%3E", nil, 400, "invalid_email", ""},
		"email list in private_identity":  {http.MethodGet, base + "/private_identity?email=a@example.com,b@example.com", nil, 400, "invalid_email", ""},
		"email over 254 bytes":            {http.MethodGet, base + "/private_identity?email=" + long, nil, 400, "invalid_email", "..."},
		"bad percent-encoding":            {http.MethodGet, base + "/private_identity?email=a%zz@example.com", nil, 400, "invalid_email", "percent"},
		"emails missing":                  {http.MethodGet, base + "/public_identities", nil, 400, "invalid_email", "missing"},
		"second email of list invalid":    {http.MethodGet, base + "/public_identities?emails=a@example.com,nope,c@example.com", nil, 400, "invalid_email", `email #2 of the list ("nope")`},
		"empty item in list":              {http.MethodGet, base + "/public_identities?emails=a@example.com,,c@example.com", nil, 400, "invalid_email", "#2"},
		"trailing comma":                  {http.MethodGet, base + "/public_identities?emails=a@example.com,", nil, 400, "invalid_email", "#2"},
		"too many emails":                 {http.MethodGet, base + "/public_identities?emails=" + strings.Repeat("x@example.com,", 100) + "x@example.com", nil, 400, "too_many_emails", "at most 100"},
		"PUT body not JSON":               {http.MethodPut, base + "/private_identity?email=a@example.com", "registered", 400, "invalid_body", ""},
		"PUT body an array":               {http.MethodPut, base + "/private_identity?email=a@example.com", `[true]`, 400, "invalid_body", ""},
		"PUT registered not a bool":       {http.MethodPut, base + "/private_identity?email=a@example.com", `{"registered": "yes"}`, 400, "invalid_body", ""},
		"PUT registered false":            {http.MethodPut, base + "/private_identity?email=a@example.com", `{"registered": false}`, 400, "invalid_body", "unregistered"},
		"PUT registered twice":            {http.MethodPut, base + "/private_identity?email=a@example.com", `{"registered": false, "Registered": true}`, 400, "invalid_body", "given twice"},
		"PUT email never seen":            {http.MethodPut, base + "/private_identity?email=never@example.com", `{"registered": true}`, 404, "user_not_found", ""},
		"PUT email with only provisional": {http.MethodPut, base + "/private_identity?email=provisional-only@example.com", `{"registered": true}`, 404, "user_not_found", ""},
		"PUT email missing":               {http.MethodPut, base + "/private_identity", `{"registered": true}`, 400, "invalid_email", ""},
		"unknown route":                   {http.MethodGet, base + "/nope", nil, 404, "not_found", ""},
		"wrong method":                    {http.MethodDelete, base + "/private_identity?email=a@example.com", nil, 405, "method_not_allowed", ""},
	} {
		t.Run(name, func(t *testing.T) {
			resp := apptest.Do(t, f.http, c.method, c.target, c.body)
			require.Equal(t, c.status, resp.Status, "body: %s", resp.Body)
			require.Equal(t, c.code, resp.ErrorCode(t))
			var b struct {
				Error struct{ Message string } `json:"error"`
			}
			resp.JSON(t, &b)
			require.NotEmpty(t, b.Error.Message)
			require.Contains(t, b.Error.Message, c.message)
		})
	}
	// The rejected PUT on a provisional-only email left it unregistered and without a user.
	_, err := f.env.Dir.Lookup(f.app, "never@example.com")
	require.Error(t, err, "a rejected PUT creates no record")
}

func TestFeatureNotEnabled(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	app := env.Server(nil) // FakeAuth nil: fakeauth.enabled false
	a := env.CreateApp(t, true).App
	base := "/apps/" + apps.URLID(a.ID)
	for name, c := range map[string]struct{ method, target string }{
		"private_identity":            {http.MethodGet, base + "/private_identity?email=a@example.com"},
		"disposable_private_identity": {http.MethodGet, base + "/disposable_private_identity"},
		"public_identities":           {http.MethodGet, base + "/public_identities?emails=a@example.com"},
		"register":                    {http.MethodPut, base + "/private_identity?email=a@example.com"},
	} {
		t.Run(name, func(t *testing.T) {
			resp := apptest.Do(t, app, c.method, c.target, nil)
			require.Equal(t, http.StatusNotFound, resp.Status)
			require.Equal(t, "feature_not_enabled", resp.ErrorCode(t))
		})
	}
	n, err := env.Store.CountRecords(a.ID)
	require.NoError(t, err)
	require.Zero(t, n, "nothing was created")
}

// A store failure is internal_error 500 with a generic message; the cause goes to the log,
// with no email and no identity. The app is declared in the config, so only the directory
// meets the failure.
func TestInternalError(t *testing.T) {
	t.Parallel()
	_, secret, err := identity.GenerateApp(rand.Reader)
	require.NoError(t, err)
	env := apptest.New(t, config.DeclaredApp{
		Name: "declared", Secret: base64.StdEncoding.EncodeToString(secret),
		AuthToken: "a-token-of-16-characters", Test: true,
	})
	app := env.Server(func(d *server.Deps) {
		d.FakeAuth = fakeauth.New(env.Apps, env.Dir, config.Default().FakeAuth, env.Prom, env.Log)
	})
	id, err := identity.AppIDFromSecret(secret)
	require.NoError(t, err)
	base := "/apps/" + apps.URLID(id)
	ok := apptest.Do(t, app, http.MethodGet, base+"/private_identity?email=known%40example.com", nil)
	require.Equal(t, http.StatusOK, ok.Status, "body: %s", ok.Body)
	perm := ok.Map(t)["private_permanent_identity"].(string)

	require.NoError(t, env.Store.Close())
	for name, target := range map[string]string{
		"private_identity":  base + "/private_identity?email=known%40example.com",
		"public_identities": base + "/public_identities?emails=known%40example.com",
	} {
		t.Run(name, func(t *testing.T) {
			resp := apptest.Do(t, app, http.MethodGet, target, nil)
			require.Equal(t, http.StatusInternalServerError, resp.Status, "body: %s", resp.Body)
			require.Equal(t, "internal_error", resp.ErrorCode(t))
			require.NotContains(t, string(resp.Body), "known@example.com")
		})
	}
	logs := env.LogBuf.String()
	require.Contains(t, logs, "request failed", "the cause is logged")
	require.NotContains(t, logs, "known@example.com")
	require.NotContains(t, logs, perm)
}
