package verification_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/store"
)

// TestEveryErrorCodeThroughHTTP reaches each error code of the verification API through HTTP,
// with the standard body (status, code, message, trace_id) and nothing sent by mistake.
func TestEveryErrorCodeThroughHTTP(t *testing.T) {
	t.Parallel()
	const (
		send   = "/verification/email"
		code   = "/verification/email/code"
		verify = "/verification/email/verify"
	)
	type request struct {
		path string
		body any
	}
	tests := []struct {
		name string
		// prepare returns the request, given a fresh env, a test app and a production app.
		prepare func(t *testing.T, e *env, test, prod apps.Created) request
		want    apierr.Code
	}{
		{"malformed JSON", func(*testing.T, *env, apps.Created, apps.Created) request {
			return request{send, `{"app_id": `}
		}, apierr.InvalidBody},
		{"body not an object", func(*testing.T, *env, apps.Created, apps.Created) request {
			return request{verify, `[1, 2]`}
		}, apierr.InvalidBody},
		{"app_id missing", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, map[string]any{"auth_token": test.AuthToken, "email_data": emailData("a@example.com")}}
		}, apierr.InvalidBody},
		{"app_id not an app ID", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "app_id", "%%%", "email_data", emailData("a@example.com"))}
		}, apierr.InvalidBody},
		{"auth_token missing", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{code, map[string]any{"app_id": apps.FormatID(test.App.ID), "email": "a@example.com"}}
		}, apierr.InvalidBody},
		{"auth_token of the wrong type", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "auth_token", 42, "email_data", emailData("a@example.com"))}
		}, apierr.InvalidBody},
		{"email_data missing", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, creds(test)}
		}, apierr.InvalidBody},
		{"subject missing", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			d := emailData("a@example.com")
			delete(d, "subject")
			return request{send, with(creds(test), "email_data", d)}
		}, apierr.InvalidBody},
		{"subject of the wrong type", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", with(emailData("a@example.com"), "subject", []int{1}))}
		}, apierr.InvalidBody},
		{"subject on two lines", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", with(emailData("a@example.com"), "subject", "a\r\nBcc: x@evil.example"))}
		}, apierr.InvalidBody},
		{"to_email missing", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			d := emailData("a@example.com")
			delete(d, "to_email")
			return request{send, with(creds(test), "email_data", d)}
		}, apierr.InvalidBody},
		{"html and text both missing", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", map[string]any{"subject": "s", "to_email": "a@example.com"})}
		}, apierr.InvalidBody},
		{"placeholder missing from text", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", with(emailData("a@example.com"), "text", "no code here"))}
		}, apierr.InvalidBody},
		{"placeholder missing from html", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", with(emailData("a@example.com"), "html", "<p>none</p>"))}
		}, apierr.InvalidBody},
		{"invalid html", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", with(emailData("a@example.com"), "html", "<div><b>SERVICE_VERIFICATION_CODE</div>"))}
		}, apierr.InvalidBody},
		{"reply_to_name without reply_to_email", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", with(emailData("a@example.com"), "reply_to_name", "Support"))}
		}, apierr.InvalidBody},
		{"/code without email", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{code, creds(test)}
		}, apierr.InvalidBody},
		{"/verify without verification_code", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{verify, with(creds(test), "email", "a@example.com")}
		}, apierr.InvalidBody},
		{"to_email invalid", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", emailData("Alice <a@example.com>"))}
		}, apierr.InvalidEmail},
		{"reply_to_email invalid", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "email_data", with(emailData("a@example.com"), "reply_to_email", "nope"))}
		}, apierr.InvalidEmail},
		{"/code email invalid", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{code, with(creds(test), "email", "a@@example.com")}
		}, apierr.InvalidEmail},
		{"/verify email invalid", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{verify, with(creds(test), "email", "", "verification_code", "12345678")}
		}, apierr.InvalidEmail},
		{"wrong auth token", func(_ *testing.T, _ *env, test, prod apps.Created) request {
			return request{verify, with(creds(test), "auth_token", prod.AuthToken, "email", "a@example.com", "verification_code", "1")}
		}, apierr.InvalidAuthToken},
		{"no identity record (registered_users_only)", func(t *testing.T, e *env, _, _ apps.Created) request {
			a := e.createApp(t, false, store.AppOptions{RegisteredUsersOnly: true})
			return request{send, with(creds(a), "email_data", emailData("a@example.com"))}
		}, apierr.NoUnlockEmail},
		{"identity not registered (registered_users_only)", func(t *testing.T, e *env, _, _ apps.Created) request {
			a := e.createApp(t, false, store.AppOptions{RegisteredUsersOnly: true})
			_, err := e.Store.UpdateRecord(a.App.ID, "a@example.com", func(r *store.Record, _ bool) (bool, error) { return true, nil })
			require.NoError(t, err)
			return request{send, with(creds(a), "email_data", emailData("a@example.com"))}
		}, apierr.NoUnlockKey},
		{"/code for a production app", func(_ *testing.T, _ *env, _, prod apps.Created) request {
			return request{code, with(creds(prod), "email", "a@example.com")}
		}, apierr.AppIsNotTest},
		{"unknown app", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{send, with(creds(test), "app_id", apps.FormatID(make([]byte, 32)), "email_data", emailData("a@example.com"))}
		}, apierr.AppNotFound},
		{"wrong code", func(t *testing.T, e *env, test, _ apps.Created) request {
			e.testCode(t, test, "a@example.com")
			return request{verify, with(creds(test), "email", "a@example.com", "verification_code", "not it")}
		}, apierr.InvalidVerificationCode},
		{"expired code", func(t *testing.T, e *env, test, _ apps.Created) request {
			c := e.testCode(t, test, "a@example.com")
			e.Clock.Add(30 * time.Minute)
			return request{verify, with(creds(test), "email", "a@example.com", "verification_code", c)}
		}, apierr.VerificationCodeExpired},
		{"no pending code", func(_ *testing.T, _ *env, test, _ apps.Created) request {
			return request{verify, with(creds(test), "email", "a@example.com", "verification_code", "12345678")}
		}, apierr.VerificationCodeNotFound},
		{"locked after wrong codes", func(t *testing.T, e *env, test, _ apps.Created) request {
			e.testCode(t, test, "a@example.com")
			for range 3 {
				require.Equal(t, "invalid_verification_code", e.verify(t, test, "a@example.com", "x").ErrorCode(t))
			}
			return request{verify, with(creds(test), "email", "a@example.com", "verification_code", "x")}
		}, apierr.TooManyAttempts},
		{"sending while throttled", func(t *testing.T, e *env, test, _ apps.Created) request {
			for range 5 {
				require.Equal(t, http.StatusOK, e.send(t, test, emailData("a@example.com")).Status)
			}
			return request{send, with(creds(test), "email_data", emailData("a@example.com"))}
		}, apierr.MaxAttemptsReached},
		{"SMTP server refuses", func(t *testing.T, e *env, test, _ apps.Created) request {
			e.SMTP.Close()
			return request{send, with(creds(test), "email_data", emailData("a@example.com"))}
		}, apierr.SendEmailError},
		{"store failure", func(t *testing.T, e *env, test, _ apps.Created) request {
			require.NoError(t, e.Store.Close())
			return request{verify, with(creds(test), "email", "a@example.com", "verification_code", "12345678")}
		}, apierr.InternalError},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		seen[tc.want.Name] = true
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			test, prod := e.createApp(t, true, store.AppOptions{}), e.createApp(t, false, store.AppOptions{})
			req := tc.prepare(t, e, test, prod)
			sent := e.SMTP.MessageCount()
			r := apptest.Do(t, e.App, "POST", req.path, req.body)
			require.Equal(t, tc.want.Status, r.Status, "body: %s", r.Body)
			require.Equal(t, tc.want.Name, r.ErrorCode(t), "body: %s", r.Body)
			require.Equal(t, sent, e.SMTP.MessageCount(), "no mail on failure")
			if tc.want == apierr.MaxAttemptsReached {
				require.NotEmpty(t, r.Header.Get("Retry-After"))
			}
		})
	}
	for _, c := range []apierr.Code{apierr.InvalidBody, apierr.InvalidEmail, apierr.InvalidAuthToken,
		apierr.NoUnlockKey, apierr.NoUnlockEmail, apierr.AppIsNotTest, apierr.AppNotFound,
		apierr.InvalidVerificationCode, apierr.VerificationCodeExpired, apierr.VerificationCodeNotFound,
		apierr.TooManyAttempts, apierr.MaxAttemptsReached, apierr.SendEmailError, apierr.InternalError} {
		require.True(t, seen[c.Name], "no test reaches %s", c.Name)
	}
}

func TestUnknownRoutesKeepTheBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := apptest.Do(t, e.App, "POST", "/verification/email/nope", "{}")
	require.Equal(t, http.StatusNotFound, r.Status)
	require.Equal(t, "not_found", r.ErrorCode(t))
	r = apptest.Do(t, e.App, "GET", "/verification/email", nil)
	require.Contains(t, []string{"not_found", "method_not_allowed"}, r.ErrorCode(t), "body: %s", r.Body)
}
