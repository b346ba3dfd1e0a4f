package mail_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

// secretCode stands for a verification code: it must never leak into errors or logs.
const secretCode = "739154"

// testConfig returns a config pointing at srv with plain SMTP.
func testConfig(srv *mailtest.Server) mail.Config {
	return mail.Config{
		Host:     srv.Host(),
		Port:     srv.Port(),
		TLS:      mail.TLSNone,
		From:     "no-reply@idvault.test",
		FromName: "idvault",
		HELO:     "idvault.test",
		Timeout:  5 * time.Second,
		PoolSize: 4,
	}
}

// newSender builds a Sender for cfg, closed when the test ends, with logs captured in the
// returned buffer.
func newSender(tb testing.TB, cfg mail.Config) (*mail.Sender, *external.Output) {
	tb.Helper()
	logs := &external.Output{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := mail.New(cfg, logger)
	require.NoError(tb, err)
	tb.Cleanup(func() { _ = s.Close() })
	return s, logs
}

// codeMessage is a verification message whose subject and bodies carry secretCode.
func codeMessage() mail.Message {
	return mail.Message{
		To:      "alice@example.org",
		ToName:  "Alice",
		Subject: "Your code is " + secretCode,
		Text:    "Code: " + secretCode,
		HTML:    "<p>Code: <b>" + secretCode + "</b></p>",
	}
}

// requireNoSecrets checks that s carries neither the code nor the full recipient address.
func requireNoSecrets(t *testing.T, s string) {
	t.Helper()
	require.NotContains(t, s, secretCode)
	require.NotContains(t, s, "alice@example.org")
	require.False(t, strings.Contains(s, "Your code"), "subject leaked: %s", s)
}
