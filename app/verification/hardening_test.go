package verification_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"idvault/app/apps"
	"idvault/app/apptest"
	"idvault/store"
)

// A field of the wrong type is named as the request names it, never by an internal struct.
func TestWrongTypeNamesTheRequestField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, true, store.AppOptions{})
	for field, body := range map[string]map[string]any{
		"app_id":     {"app_id": 42, "auth_token": a.AuthToken, "email": "x@example.com"},
		"auth_token": {"app_id": apps.FormatID(a.App.ID), "auth_token": []int{1}, "email": "x@example.com"},
	} {
		r := apptest.Do(t, e.App, http.MethodPost, "/verification/email/code", body)
		require.Equal(t, "invalid_body", r.ErrorCode(t), field)
		var b struct {
			Error struct{ Message string } `json:"error"`
		}
		r.JSON(t, &b)
		require.Equal(t, field+" must be a string", b.Error.Message)
		require.NotContains(t, string(r.Body), "credentials")
	}
}

// Tanker's JavaScript functional tests post /verification/email/code with fetch and no header,
// so the JSON body arrives as text/plain;charset=UTF-8: every verification route reads it.
func TestVerificationAcceptsJSONSentAsTextPlain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	test, prod := e.createApp(t, true, store.AppOptions{}), e.createApp(t, false, store.AppOptions{})
	const ct = "text/plain;charset=UTF-8"
	r := apptest.Do(t, e.App, http.MethodPost, "/verification/email/code", with(creds(test), "email", "js@example.com"), "Content-Type", ct)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	var got struct {
		Code string `json:"verification_code"`
	}
	r.JSON(t, &got)
	require.NotEmpty(t, got.Code)
	r = apptest.Do(t, e.App, http.MethodPost, "/verification/email/verify",
		with(creds(test), "email", "js@example.com", "verification_code", got.Code), "Content-Type", ct)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	r = apptest.Do(t, e.App, http.MethodPost, "/verification/email", with(creds(prod), "email_data", emailData("js@example.com")), "Content-Type", ct)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	r = apptest.Do(t, e.App, http.MethodPost, "/verification/email/code", with(creds(test), "email", "js2@example.com"))
	require.Equal(t, http.StatusOK, r.Status, "and application/json of course")
}
