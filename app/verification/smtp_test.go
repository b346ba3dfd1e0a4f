package verification_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
	"github.com/idvault/idvault/store"
)

// TestSMTPFaultsThroughHTTP: whatever the SMTP server does wrong, the send answers
// send_email_error naming the failed stage, and the code of the unsent mail is withdrawn.
func TestSMTPFaultsThroughHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		opt   func(s *setup)
		fault func(srv *mailtest.Server)
		stage string
	}{
		{"connection refused", nil, func(srv *mailtest.Server) { srv.Close() }, mail.StageConnect},
		{"4xx at RCPT TO", nil, func(srv *mailtest.Server) {
			srv.SetFault(mailtest.Fault{At: mailtest.AtRcpt, Code: 451})
		}, mail.StageRcptTo},
		{"5xx after DATA", nil, func(srv *mailtest.Server) {
			srv.SetFault(mailtest.Fault{At: mailtest.AtData, Code: 554})
		}, mail.StageData},
		{"5xx greeting", nil, func(srv *mailtest.Server) {
			srv.SetFault(mailtest.Fault{At: mailtest.AtConnect, Code: 554})
		}, mail.StageConnect},
		{"stall past the timeout", func(s *setup) { s.mail.Timeout = 300 * time.Millisecond }, func(srv *mailtest.Server) {
			srv.SetFault(mailtest.Fault{At: mailtest.AtMail, Action: mailtest.Stall, Duration: 2 * time.Second})
		}, mail.StageTimeout},
		{"connection dropped", nil, func(srv *mailtest.Server) {
			srv.SetFault(mailtest.Fault{At: mailtest.AtMail, Action: mailtest.Drop})
		}, mail.StageMailFrom},
		{"AUTH required, none configured", func(s *setup) {
			s.smtp = mailtest.Options{Username: "idv", Password: "s3cret-pass"}
		}, nil, mail.StageMailFrom},
		{"AUTH with the wrong password", func(s *setup) {
			s.smtp = mailtest.Options{Username: "idv", Password: "s3cret-pass"}
			s.mail.Username, s.mail.Password = "idv", "wrong-pass"
		}, nil, mail.StageAuth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.opt)
			a := e.createApp(t, true, store.AppOptions{})
			const to = "fault@example.com"
			if tc.fault != nil {
				tc.fault(e.SMTP)
			}
			r := e.send(t, a, emailData(to))
			require.Equal(t, http.StatusInternalServerError, r.Status, "body: %s", r.Body)
			require.Equal(t, "send_email_error", r.ErrorCode(t))
			var b struct {
				Error struct{ Message string } `json:"error"`
			}
			r.JSON(t, &b)
			require.Contains(t, b.Error.Message, fmt.Sprintf("stage %q", tc.stage))
			unsent := codeIn(t, e.Mail.last(t).Text)
			require.NotContains(t, string(r.Body), unsent)

			// The unsent code was withdrawn: it does not verify, and /code hands out another.
			require.Equal(t, "verification_code_not_found", e.verify(t, a, to, unsent).ErrorCode(t))
			require.NotEqual(t, unsent, e.testCode(t, a, to))

			m := apptest.Do(t, e.App, "GET", "/metrics", nil)
			require.Contains(t, string(m.Body), fmt.Sprintf(`idvault_verification_send_failures_total{stage=%q} 1`, tc.stage))
		})
	}
}

func TestSMTPAuthSucceeds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(s *setup) {
		s.smtp = mailtest.Options{Username: "idv", Password: "s3cret-pass"}
		s.mail.Username, s.mail.Password = "idv", "s3cret-pass"
	})
	a := e.createApp(t, false, store.AppOptions{})
	c := e.sendOK(t, a, "auth@example.com")
	require.Equal(t, "idv", e.SMTP.Messages()[0].AuthUser)
	require.Equal(t, http.StatusOK, e.verify(t, a, "auth@example.com", c).Status)
}

func TestSMTPConnectionsAreReused(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(s *setup) { s.mail.PoolSize = 2 })
	a := e.createApp(t, false, store.AppOptions{})
	for i := range 6 {
		e.sendOK(t, a, fmt.Sprintf("r%d@example.com", i))
	}
	require.Equal(t, 1, e.SMTP.Connections(), "sequential sends share one SMTP connection")
}

// TestNothingSecretIsLogged runs successes and failures and checks that no code, auth token,
// subject or body reached the log.
func TestNothingSecretIsLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	test, prod := e.createApp(t, true, store.AppOptions{}), e.createApp(t, false, store.AppOptions{})
	codes := []string{e.sendOK(t, prod, "log1@example.com"), e.testCode(t, test, "log2@example.com")}
	require.Equal(t, http.StatusOK, e.verify(t, prod, "log1@example.com", codes[0]).Status)
	require.Equal(t, "invalid_verification_code", e.verify(t, test, "log2@example.com", "12345678").ErrorCode(t))
	e.SMTP.SetFault(mailtest.Fault{At: mailtest.AtData, Code: 554})
	require.Equal(t, "send_email_error", e.send(t, test, emailData("log3@example.com")).ErrorCode(t))
	codes = append(codes, codeIn(t, e.Mail.last(t).Text))
	e.SMTP.Close()
	require.Equal(t, "send_email_error", e.send(t, test, emailData("log4@example.com")).ErrorCode(t))
	codes = append(codes, codeIn(t, e.Mail.last(t).Text))

	logs := e.LogBuf.String()
	require.Contains(t, logs, "send_email_error", "failures are logged")
	for _, c := range codes {
		require.NotContains(t, logs, c)
	}
	for _, secret := range []string{test.AuthToken, prod.AuthToken, "Your code", "SERVICE_VERIFICATION_CODE", "<b>", "log1@example.com", "log3@example.com"} {
		require.NotContains(t, logs, secret)
	}
}
