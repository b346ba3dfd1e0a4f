package verification_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/store"
)

func TestSendDeliversTheAppsMail(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, false, store.AppOptions{})
	data := map[string]any{
		"subject":        "SERVICE_VERIFICATION_CODE is your code",
		"to_email":       " Alice@Example.COM ",
		"to_name":        "Alice Liddell",
		"from_name":      "Wonderland App",
		"reply_to_email": "support@wonderland.example",
		"reply_to_name":  "Support Team",
		"text":           "Text code=SERVICE_VERIFICATION_CODE; again SERVICE_VERIFICATION_CODE",
		"html":           "<!DOCTYPE html><html><body><p>Code: <b>code=SERVICE_VERIFICATION_CODE;</b><br>again SERVICE_VERIFICATION_CODE</p></body></html>",
	}
	r := e.send(t, a, data)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	require.JSONEq(t, `{}`, string(r.Body))
	require.Contains(t, r.Header.Get("Content-Type"), "application/json")

	msgs := e.SMTP.Messages()
	require.Len(t, msgs, 1)
	require.Equal(t, "idvault@idvault.test", msgs[0].From, "envelope sender is idvault's own")
	require.Equal(t, []string{"Alice@example.com"}, msgs[0].To, "the normalised address")
	m := parseMail(t, msgs[0].Data)
	code := codeIn(t, m.Text)
	require.Equal(t, code+" is your code", m.Subject)
	require.Equal(t, "Text code="+code+"; again "+code, m.Text)
	require.Contains(t, m.HTML, "<b>code="+code+";</b><br>again "+code+"</p>")
	for _, part := range []string{m.Subject, m.Text, m.HTML} {
		require.NotContains(t, part, "SERVICE_VERIFICATION_CODE")
	}
	from, err := m.Header.AddressList("From")
	require.NoError(t, err)
	require.Equal(t, "Wonderland App", from[0].Name)
	require.Equal(t, "idvault@idvault.test", from[0].Address)
	to, err := m.Header.AddressList("To")
	require.NoError(t, err)
	require.Equal(t, "Alice Liddell", to[0].Name)
	require.Equal(t, "Alice@example.com", to[0].Address)
	rt, err := m.Header.AddressList("Reply-To")
	require.NoError(t, err)
	require.Equal(t, "Support Team", rt[0].Name)
	require.Equal(t, "support@wonderland.example", rt[0].Address)
	require.NotEmpty(t, m.Header.Get("Message-ID"))
	require.NotEmpty(t, m.Header.Get("Date"))
	require.Contains(t, m.Header.Get("Content-Type"), "multipart/alternative")

	// The code in the mail verifies, once, for the address as sent or normalised.
	require.Equal(t, http.StatusOK, e.verify(t, a, "Alice@example.com", code).Status)
	require.Equal(t, "verification_code_used", e.verify(t, a, "Alice@EXAMPLE.com", code).ErrorCode(t))
}

func TestSendTextOnlyHTMLOnlyAndAppIDForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(s *setup) { s.cfg.Placeholders = []string{"TANKER_VERIFICATION_CODE"} })
	a := e.createApp(t, false, store.AppOptions{})
	tests := []struct {
		name  string
		appID string
		data  map[string]any
	}{
		{"text only, url-safe app ID", apps.URLID(a.App.ID), map[string]any{
			"subject": "hi", "to_email": "t@example.com", "text": "code=SERVICE_VERIFICATION_CODE;"}},
		{"html only, std base64 app ID without padding", strings.TrimRight(apps.FormatID(a.App.ID), "="), map[string]any{
			"subject": "hi", "to_email": "h@example.com", "html": "<p>code=SERVICE_VERIFICATION_CODE;</p>"}},
		{"the configured alias", base64.StdEncoding.EncodeToString(a.App.ID), map[string]any{
			"subject": "TANKER_VERIFICATION_CODE", "to_email": "alias@example.com", "text": "code=TANKER_VERIFICATION_CODE;"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := apptest.Do(t, e.App, "POST", "/verification/email", map[string]any{
				"app_id": tc.appID, "auth_token": a.AuthToken, "email_data": tc.data})
			require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
			msgs := e.SMTP.Messages()
			m := parseMail(t, msgs[len(msgs)-1].Data)
			if tc.data["html"] != nil {
				require.Empty(t, m.Text)
				require.Equal(t, http.StatusOK, e.verify(t, a, tc.data["to_email"].(string), codeIn(t, m.HTML)).Status)
				return
			}
			require.Empty(t, m.HTML)
			require.NotContains(t, m.Subject, "VERIFICATION_CODE")
			require.Equal(t, http.StatusOK, e.verify(t, a, tc.data["to_email"].(string), codeIn(t, m.Text)).Status)
		})
	}
}

func TestLegacyAppsGetFlatErrorsOnTheSendRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	legacy := e.createApp(t, false, store.AppOptions{LegacyErrors: true})

	flat := func(t *testing.T, r apptest.Response) string {
		t.Helper()
		var b map[string]any
		r.JSON(t, &b)
		require.NotContains(t, b, "error", "flat body: %s", r.Body)
		require.Equal(t, float64(r.Status), b["status"])
		require.NotEmpty(t, b["message"])
		require.Contains(t, r.Header.Get("Content-Type"), "application/json")
		return b["code"].(string)
	}
	bad := with(creds(legacy), "auth_token", "wrong")
	r := apptest.Do(t, e.App, "POST", "/verification/email", with(bad, "email_data", emailData("l@example.com")))
	require.Equal(t, http.StatusUnauthorized, r.Status)
	require.Equal(t, "invalid_auth_token", flat(t, r))

	r = apptest.Do(t, e.App, "POST", "/verification/email", with(creds(legacy), "email_data", "not an object"))
	require.Equal(t, http.StatusBadRequest, r.Status)
	require.Equal(t, "invalid_body", flat(t, r))

	// Reply-To fields are ignored for legacy apps, even when they would be invalid.
	data := with(emailData("l@example.com"), "reply_to_email", "not an address", "reply_to_name", "Nobody")
	r = e.send(t, legacy, data)
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
	m := parseMail(t, e.SMTP.Messages()[0].Data)
	require.Empty(t, m.Header.Get("Reply-To"))
	data = with(emailData("l@example.com"), "reply_to_name", "Nobody")
	require.Equal(t, http.StatusOK, e.send(t, legacy, data).Status)

	// Other routes, and other apps, keep the standard body.
	require.Equal(t, "invalid_verification_code", e.verify(t, legacy, "l@example.com", "00000000").ErrorCode(t))
	normal := e.createApp(t, false, store.AppOptions{})
	require.Equal(t, "invalid_auth_token", e.send(t, with2(normal, "auth_token", "x"), emailData("n@example.com")).ErrorCode(t))
}

// with2 returns a copy of a with its auth token replaced.
func with2(a apps.Created, field, value string) apps.Created {
	if field == "auth_token" {
		a.AuthToken = value
	}
	return a
}

func TestRegisteredUsersOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, false, store.AppOptions{RegisteredUsersOnly: true})
	for email, registered := range map[string]bool{"pending@example.com": false, "done@example.com": true} {
		_, err := e.Store.UpdateRecord(a.App.ID, email, func(r *store.Record, _ bool) (bool, error) {
			r.UserID, r.Registered = "user-"+email, registered
			return true, nil
		})
		require.NoError(t, err)
	}
	tests := []struct {
		name, to, want string
	}{
		{"no identity record", "stranger@example.com", "no_unlock_email"},
		{"identity not registered yet", "pending@example.com", "no_unlock_key"},
		{"registered identity", "done@example.com", ""},
		{"normalised before the lookup", " done@EXAMPLE.com", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.send(t, a, emailData(tc.to))
			if tc.want == "" {
				require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)
				return
			}
			require.Equal(t, http.StatusForbidden, r.Status)
			require.Equal(t, tc.want, r.ErrorCode(t))
		})
	}
	require.Equal(t, 2, e.SMTP.MessageCount())
}
