package verification_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/app/verification"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
	"github.com/idvault/idvault/store"
)

// TestEndToEndWithMailDev sends through a real MailDev (npm maildev 2.2.1) and reads the mail back
// from its REST API. It is skipped when MailDev is not installed, unless
// IDVAULT_REQUIRE_EXTERNAL=1 (install: see mailtest.MailDevInstallCommand).
func TestEndToEndWithMailDev(t *testing.T) {
	t.Parallel()
	md := mailtest.StartMailDev(t)
	base := apptest.New(t)
	sender, err := mail.New(mail.Config{
		Host: md.SMTPHost, Port: md.SMTPPort, TLS: mail.TLSNone,
		From: "verify@idvault.test", FromName: "idvault", HELO: "idvault.test", Timeout: 10 * time.Second,
	}, base.Log)
	require.NoError(t, err)
	t.Cleanup(func() { sender.Close() })
	require.NoError(t, sender.Check(context.Background()), "MailDev answers the readiness check")
	h, err := verification.New(verification.Deps{
		Apps: base.Apps, Store: base.Store, Mailer: sender, Config: verificationConfig(),
		CodeKey: base.MasterKey.Derive("verification code hmac"), Metrics: base.Prom, Logger: base.Log,
	})
	require.NoError(t, err)
	app := base.Server(func(d *server.Deps) { d.Verification = h })
	e := &env{Env: base, App: app}
	a := e.createApp(t, false, store.AppOptions{})

	r := e.send(t, a, map[string]any{
		"subject":        "Code SERVICE_VERIFICATION_CODE for Wonderland",
		"to_email":       "alice@wonderland.example",
		"to_name":        "Alice Liddell",
		"from_name":      "Wonderland",
		"reply_to_email": "help@wonderland.example",
		"reply_to_name":  "Help Desk",
		"text":           "Your code is code=SERVICE_VERIFICATION_CODE; valid 30 minutes.",
		"html":           "<html><body><p>Your code is <b>code=SERVICE_VERIFICATION_CODE;</b></p></body></html>",
	})
	require.Equal(t, http.StatusOK, r.Status, "body: %s", r.Body)

	got := md.WaitForEmails(t, 1, 15*time.Second)
	require.Len(t, got, 1)
	m := got[0]
	code := codeIn(t, m.Text)
	require.Equal(t, "Code "+code+" for Wonderland", m.Subject)
	require.Contains(t, m.Text, "Your code is code="+code+"; valid 30 minutes.")
	require.Contains(t, m.HTML, "<b>code="+code+";</b>")
	for _, s := range []string{m.Subject, m.Text, m.HTML} {
		require.NotContains(t, s, "SERVICE_VERIFICATION_CODE")
	}
	require.Equal(t, []mailtest.MailDevAddress{{Address: "verify@idvault.test", Name: "Wonderland"}}, m.From)
	require.Equal(t, []mailtest.MailDevAddress{{Address: "alice@wonderland.example", Name: "Alice Liddell"}}, m.To)
	require.Equal(t, []mailtest.MailDevAddress{{Address: "help@wonderland.example", Name: "Help Desk"}}, m.ReplyTo)

	require.Equal(t, http.StatusOK, e.verify(t, a, "alice@wonderland.example", code).Status, "the code in the mail verifies")
	require.Equal(t, "verification_code_used", e.verify(t, a, "alice@wonderland.example", code).ErrorCode(t), "used once")
}
