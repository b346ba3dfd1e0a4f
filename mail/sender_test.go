package mail_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

func TestTLSPolicies(t *testing.T) {
	cases := []struct {
		name       string
		server     mailtest.Options
		tls        mail.TLSMode
		skipVerify bool
		wantStage  string // "" means success
		wantTLS    bool
	}{
		{name: "mandatory with STARTTLS offered", server: mailtest.Options{StartTLS: true},
			tls: mail.TLSMandatory, skipVerify: true, wantTLS: true},
		{name: "mandatory rejects self-signed cert without skip verify",
			server: mailtest.Options{StartTLS: true}, tls: mail.TLSMandatory, wantStage: mail.StageTLS},
		{name: "mandatory without STARTTLS offered", server: mailtest.Options{},
			tls: mail.TLSMandatory, skipVerify: true, wantStage: mail.StageTLS},
		{name: "opportunistic with STARTTLS offered", server: mailtest.Options{StartTLS: true},
			tls: mail.TLSOpportunistic, skipVerify: true, wantTLS: true},
		{name: "opportunistic without STARTTLS offered", server: mailtest.Options{},
			tls: mail.TLSOpportunistic, skipVerify: true, wantTLS: false},
		{name: "none ignores offered STARTTLS", server: mailtest.Options{StartTLS: true},
			tls: mail.TLSNone, wantTLS: false},
		{name: "none against plain server", server: mailtest.Options{}, tls: mail.TLSNone},
		{name: "ssl with implicit TLS listener", server: mailtest.Options{ImplicitTLS: true},
			tls: mail.TLSImplicit, skipVerify: true, wantTLS: true},
		{name: "ssl against plain listener", server: mailtest.Options{},
			tls: mail.TLSImplicit, skipVerify: true, wantStage: mail.StageTLS},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, tc.server)
			cfg := testConfig(srv)
			cfg.TLS = tc.tls
			cfg.TLSSkipVerify = tc.skipVerify
			cfg.Timeout = 3 * time.Second
			s, _ := newSender(t, cfg)
			ctx := context.Background()

			checkErr := s.Check(ctx)
			sendErr := s.Send(ctx, codeMessage())
			if tc.wantStage != "" {
				for _, err := range []error{checkErr, sendErr} {
					require.Error(t, err)
					require.Equal(t, tc.wantStage, mail.Stage(err), "error: %v", err)
					require.False(t, mail.IsTemporary(err), "error: %v", err)
					requireNoSecrets(t, err.Error())
				}
				require.Zero(t, srv.MessageCount())
				return
			}
			require.NoError(t, checkErr)
			require.NoError(t, sendErr)
			msgs := srv.Messages()
			require.Len(t, msgs, 1)
			require.Equal(t, tc.wantTLS, msgs[0].TLS)
			require.Equal(t, "no-reply@idvault.test", msgs[0].From)
			require.Equal(t, []string{"alice@example.org"}, msgs[0].To)
		})
	}
}

func TestAuth(t *testing.T) {
	cases := []struct {
		name       string
		server     mailtest.Options
		tls        mail.TLSMode
		user, pass string
		wantStage  string
		wantCode   int
	}{
		{name: "right credentials", server: mailtest.Options{Username: "idv", Password: "s3cret"},
			user: "idv", pass: "s3cret"},
		{name: "right credentials after STARTTLS",
			server: mailtest.Options{Username: "idv", Password: "s3cret", StartTLS: true},
			tls:    mail.TLSMandatory, user: "idv", pass: "s3cret"},
		{name: "wrong password", server: mailtest.Options{Username: "idv", Password: "s3cret"},
			user: "idv", pass: "wrong-pass", wantStage: mail.StageAuth, wantCode: 535},
		{name: "wrong user", server: mailtest.Options{Username: "idv", Password: "s3cret"},
			user: "mallory", pass: "s3cret", wantStage: mail.StageAuth, wantCode: 535},
		{name: "no credentials", server: mailtest.Options{Username: "idv", Password: "s3cret"},
			wantStage: mail.StageMailFrom, wantCode: 530},
		{name: "credentials but server offers no AUTH", server: mailtest.Options{},
			user: "idv", pass: "s3cret", wantStage: mail.StageAuth},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, tc.server)
			cfg := testConfig(srv)
			if tc.tls != "" {
				cfg.TLS = tc.tls
				cfg.TLSSkipVerify = true
			}
			cfg.Username, cfg.Password = tc.user, tc.pass
			s, logs := newSender(t, cfg)

			err := s.Send(context.Background(), codeMessage())
			if tc.wantStage == "" {
				require.NoError(t, err)
				msgs := srv.Messages()
				require.Len(t, msgs, 1)
				require.Equal(t, tc.user, msgs[0].AuthUser)
				return
			}
			require.Error(t, err)
			require.Equal(t, tc.wantStage, mail.Stage(err), "error: %v", err)
			require.False(t, mail.IsTemporary(err), "error: %v", err)
			var se *mail.SendError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.wantCode, se.Code)
			requireNoSecrets(t, err.Error())
			if tc.pass != "" {
				require.NotContains(t, err.Error(), tc.pass)
				require.NotContains(t, logs.String(), tc.pass)
			}
			require.Zero(t, srv.MessageCount())
		})
	}
}

func TestServerRefusals(t *testing.T) {
	cases := []struct {
		name          string
		fault         mailtest.Fault
		wantStage     string
		wantTemporary bool
		wantCode      int
		// times is how often the fault strikes (default 1). EHLO refusals need 2 because
		// the client falls back to HELO; a drop at MAIL FROM on a reused connection looks
		// like a stale connection and is retried once on a fresh one, so it needs 2 too.
		times int
	}{
		{name: "550 at RCPT", fault: mailtest.Fault{At: mailtest.AtRcpt, Code: 550},
			wantStage: mail.StageRcptTo, wantCode: 550},
		{name: "451 at RCPT", fault: mailtest.Fault{At: mailtest.AtRcpt, Code: 451},
			wantStage: mail.StageRcptTo, wantTemporary: true, wantCode: 451},
		{name: "451 at MAIL FROM", fault: mailtest.Fault{At: mailtest.AtMail, Code: 451},
			wantStage: mail.StageMailFrom, wantTemporary: true, wantCode: 451},
		{name: "553 at MAIL FROM", fault: mailtest.Fault{At: mailtest.AtMail, Code: 553},
			wantStage: mail.StageMailFrom, wantCode: 553},
		{name: "554 at DATA", fault: mailtest.Fault{At: mailtest.AtData, Code: 554},
			wantStage: mail.StageData, wantCode: 554},
		{name: "452 at DATA", fault: mailtest.Fault{At: mailtest.AtData, Code: 452},
			wantStage: mail.StageData, wantTemporary: true, wantCode: 452},
		{name: "554 greeting", fault: mailtest.Fault{At: mailtest.AtConnect, Code: 554},
			wantStage: mail.StageConnect, wantCode: 554},
		{name: "421 greeting", fault: mailtest.Fault{At: mailtest.AtConnect, Code: 421},
			wantStage: mail.StageConnect, wantTemporary: true, wantCode: 421},
		{name: "550 at EHLO", fault: mailtest.Fault{At: mailtest.AtHelo, Code: 550},
			wantStage: mail.StageConnect, wantCode: 550, times: 2},
		{name: "drop at connect", fault: mailtest.Fault{At: mailtest.AtConnect, Action: mailtest.Drop},
			wantStage: mail.StageConnect, wantTemporary: true},
		{name: "drop at MAIL FROM", fault: mailtest.Fault{At: mailtest.AtMail, Action: mailtest.Drop},
			wantStage: mail.StageMailFrom, wantTemporary: true, times: 2},
		{name: "drop at RCPT", fault: mailtest.Fault{At: mailtest.AtRcpt, Action: mailtest.Drop},
			wantStage: mail.StageRcptTo, wantTemporary: true},
		{name: "drop at DATA", fault: mailtest.Fault{At: mailtest.AtData, Action: mailtest.Drop},
			wantStage: mail.StageData, wantTemporary: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{})
			s, logs := newSender(t, testConfig(srv))
			ctx := context.Background()

			// A first send leaves a healthy pooled connection behind; the fault must not
			// be mistaken for a stale connection and silently retried.
			require.NoError(t, s.Send(ctx, codeMessage()))
			tc.fault.Times = max(tc.times, 1)
			srv.SetFault(tc.fault)
			if tc.fault.At == mailtest.AtConnect || tc.fault.At == mailtest.AtHelo {
				srv.DropConnections() // force a new connection so the fault is reached
			}

			err := s.Send(ctx, codeMessage())
			require.Error(t, err)
			require.Equal(t, tc.wantStage, mail.Stage(err), "error: %v", err)
			require.Equal(t, tc.wantTemporary, mail.IsTemporary(err), "error: %v", err)
			var se *mail.SendError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.wantCode, se.Code, "error: %v", err)
			require.Contains(t, err.Error(), tc.wantStage)
			requireNoSecrets(t, err.Error())
			requireNoSecrets(t, logs.String())
			require.Equal(t, 1, srv.MessageCount())

			// The next send on the same Sender works, on a fresh connection.
			before := srv.Connections()
			require.NoError(t, s.Send(ctx, codeMessage()))
			require.Equal(t, 2, srv.MessageCount())
			require.Equal(t, before+1, srv.Connections(), "failed connection must not be reused")
		})
	}
}

func TestStallTimesOut(t *testing.T) {
	const timeout = 400 * time.Millisecond
	cases := []struct {
		name  string
		at    mailtest.Stage
		fresh bool // the stall happens while dialling
	}{
		{name: "greeting", at: mailtest.AtConnect, fresh: true},
		{name: "EHLO", at: mailtest.AtHelo, fresh: true},
		{name: "MAIL FROM", at: mailtest.AtMail},
		{name: "RCPT TO", at: mailtest.AtRcpt},
		{name: "end of DATA", at: mailtest.AtData},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{})
			cfg := testConfig(srv)
			cfg.Timeout = timeout
			s, _ := newSender(t, cfg)
			ctx := context.Background()
			if !tc.fresh {
				require.NoError(t, s.Send(ctx, codeMessage()))
			}
			srv.SetFault(mailtest.Fault{At: tc.at, Action: mailtest.Stall, Times: 1})

			start := time.Now()
			err := s.Send(ctx, codeMessage())
			elapsed := time.Since(start)
			require.Error(t, err)
			require.Equal(t, mail.StageTimeout, mail.Stage(err), "error: %v", err)
			require.True(t, mail.IsTemporary(err))
			require.ErrorIs(t, err, context.DeadlineExceeded)
			require.GreaterOrEqual(t, elapsed, timeout*3/4)
			require.Less(t, elapsed, 3*timeout, "send must give up around the timeout")
			requireNoSecrets(t, err.Error())

			require.NoError(t, s.Send(ctx, codeMessage()))
		})
	}
}

func TestCheckStallTimesOut(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	cfg := testConfig(srv)
	cfg.Timeout = 300 * time.Millisecond
	s, _ := newSender(t, cfg)
	srv.SetFault(mailtest.Fault{At: mailtest.AtHelo, Action: mailtest.Stall})

	err := s.Check(context.Background()) // a stall past the timeout would hang here
	require.Equal(t, mail.StageTimeout, mail.Stage(err), "error: %v", err)
}

func TestContextCanceled(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s, _ := newSender(t, testConfig(srv))
	srv.SetFault(mailtest.Fault{At: mailtest.AtRcpt, Action: mailtest.Stall})

	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	err := s.Send(ctx, codeMessage()) // a send deaf to its context would hang here
	require.Equal(t, mail.StageCanceled, mail.Stage(err), "error: %v", err)
	require.ErrorIs(t, err, context.Canceled)
}

func TestDeadPooledConnectionIsReplaced(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s, _ := newSender(t, testConfig(srv))
	ctx := context.Background()

	require.NoError(t, s.Send(ctx, codeMessage()))
	require.Equal(t, 1, srv.Connections())

	// The server drops the idle session (idle timeout, restart...).
	require.Equal(t, 1, srv.DropConnections())
	require.Eventually(t, func() bool { return srv.OpenConnections() == 0 },
		time.Second, 10*time.Millisecond)

	require.NoError(t, s.Send(ctx, codeMessage()), "a dead pooled connection must not fail the send")
	require.Equal(t, 2, srv.MessageCount())
	require.Equal(t, 2, srv.Connections())
}

func TestIdleConnectionsAreClosed(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	cfg := testConfig(srv)
	cfg.IdleTimeout = 150 * time.Millisecond
	s, _ := newSender(t, cfg)
	ctx := context.Background()

	require.NoError(t, s.Send(ctx, codeMessage()))
	require.Equal(t, 1, srv.OpenConnections())
	require.Eventually(t, func() bool { return srv.OpenConnections() == 0 },
		3*time.Second, 20*time.Millisecond, "idle connection must be closed")

	require.NoError(t, s.Send(ctx, codeMessage()))
	require.Equal(t, 2, srv.Connections())
}

func TestClose(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	s, _ := newSender(t, testConfig(srv))
	ctx := context.Background()
	require.NoError(t, s.Send(ctx, codeMessage()))
	require.NoError(t, s.Close())
	require.Eventually(t, func() bool { return srv.OpenConnections() == 0 },
		time.Second, 10*time.Millisecond)

	err := s.Send(ctx, codeMessage())
	require.Equal(t, mail.StageClosed, mail.Stage(err))
	require.ErrorIs(t, err, mail.ErrClosed)
	require.Equal(t, mail.StageClosed, mail.Stage(s.Check(ctx)))
	require.NoError(t, s.Close(), "Close is idempotent")
}

func TestConnectRefused(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	cfg := testConfig(srv)
	srv.Close() // nothing listens on the port any more
	s, _ := newSender(t, cfg)

	err := s.Send(context.Background(), codeMessage())
	require.Equal(t, mail.StageConnect, mail.Stage(err), "error: %v", err)
	require.True(t, mail.IsTemporary(err))
	require.Equal(t, mail.StageConnect, mail.Stage(s.Check(context.Background())))
}

func TestStageOfForeignError(t *testing.T) {
	require.Equal(t, "", mail.Stage(nil))
	require.Equal(t, "", mail.Stage(errors.New("x")))
	wrapped := errors.Join(errors.New("x"), &mail.SendError{Stage: mail.StageData})
	require.Equal(t, mail.StageData, mail.Stage(wrapped))
}

// Credentials never go out over an unencrypted connection to a non-loopback host: with
// opportunistic TLS and a server that does not offer STARTTLS, AUTH is refused; only an
// explicit tls: none (allowed by allow_plaintext_auth) sends them.
func TestAuthRefusedInClearToRemoteHost(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{Username: "idv", Password: "hunter2"})
	cfg := testConfig(srv)
	cfg.Host = "smtp.example.org"
	cfg.Username, cfg.Password = "idv", "hunter2"

	cfg.TLS = mail.TLSOpportunistic
	s, _ := newSender(t, cfg)
	mail.RouteTo(s, srv.Addr())
	err := s.Check(context.Background())
	var se *mail.SendError
	require.ErrorAs(t, err, &se)
	require.Equal(t, mail.StageAuth, se.Stage)
	require.NotContains(t, err.Error(), "hunter2")

	cfg.TLS = mail.TLSNone
	_, err = mail.New(cfg, nil)
	require.ErrorContains(t, err, "mail.tls", "tls none with a password to a remote host needs allow_plaintext_auth")

	cfg.AllowPlaintextAuth = true
	s, _ = newSender(t, cfg)
	mail.RouteTo(s, srv.Addr())
	require.NoError(t, s.Check(context.Background()), "explicit tls none, explicitly allowed")
}

// Cause is a short description safe for unauthenticated readiness probes.
func TestCheckCauseIsShort(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	cfg := testConfig(srv)
	srv.Close()
	s, _ := newSender(t, cfg)
	var se *mail.SendError
	require.ErrorAs(t, s.Check(context.Background()), &se)
	require.Equal(t, "connect refused", se.Cause())

	srv = mailtest.Start(t, mailtest.Options{Username: "idv", Password: "right"})
	cfg = testConfig(srv)
	cfg.Username, cfg.Password = "idv", "wrong"
	s, _ = newSender(t, cfg)
	require.ErrorAs(t, s.Check(context.Background()), &se)
	require.Equal(t, "auth failed", se.Cause())

	srv = mailtest.Start(t, mailtest.Options{})
	srv.SetFault(mailtest.Fault{At: mailtest.AtConnect, Code: 554})
	cfg = testConfig(srv)
	s, _ = newSender(t, cfg)
	require.ErrorAs(t, s.Check(context.Background()), &se)
	require.Equal(t, "connect failed", se.Cause())
	require.NotContains(t, se.Cause(), "554")
}

// A send that failed after the whole message was out (the server stalled or hung up instead of
// answering the final "." of DATA) may have been delivered, and says so; one that failed before,
// or that the server refused, says it was not.
func TestMaybeDelivered(t *testing.T) {
	cases := []struct {
		name      string
		fault     mailtest.Fault
		cancel    bool // the caller cancels instead of the timeout expiring
		wantStage string
		want      bool
	}{
		{name: "stall after DATA", fault: mailtest.Fault{At: mailtest.AtData, Action: mailtest.Stall}, wantStage: mail.StageTimeout, want: true},
		{name: "cancel after DATA", fault: mailtest.Fault{At: mailtest.AtData, Action: mailtest.Stall}, cancel: true, wantStage: mail.StageCanceled, want: true},
		{name: "drop after DATA", fault: mailtest.Fault{At: mailtest.AtData, Action: mailtest.Drop}, wantStage: mail.StageData, want: true},
		{name: "452 after DATA", fault: mailtest.Fault{At: mailtest.AtData, Code: 452}, wantStage: mail.StageData},
		{name: "554 after DATA", fault: mailtest.Fault{At: mailtest.AtData, Code: 554}, wantStage: mail.StageData},
		{name: "stall at RCPT", fault: mailtest.Fault{At: mailtest.AtRcpt, Action: mailtest.Stall}, wantStage: mail.StageTimeout},
		{name: "drop at RCPT", fault: mailtest.Fault{At: mailtest.AtRcpt, Action: mailtest.Drop}, wantStage: mail.StageRcptTo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := mailtest.Start(t, mailtest.Options{})
			cfg := testConfig(srv)
			cfg.Timeout = 300 * time.Millisecond
			s, _ := newSender(t, cfg)
			tc.fault.Times = 1
			srv.SetFault(tc.fault)
			ctx := context.Background()
			if tc.cancel {
				c, cancel := context.WithCancel(ctx)
				time.AfterFunc(100*time.Millisecond, cancel)
				ctx = c
			}
			err := s.Send(ctx, codeMessage())
			var se *mail.SendError
			require.ErrorAs(t, err, &se)
			require.Equal(t, tc.wantStage, se.Stage, "error: %v", err)
			require.Equal(t, tc.want, se.MaybeDelivered, "error: %v", err)
		})
	}
}

func TestNonASCIIAddressNeedsSMTPUTF8(t *testing.T) {
	cases := []struct {
		name     string
		smtputf8 bool
		to       string
		replyTo  string
		from     string
		wantSent bool
	}{
		{name: "ascii addresses need nothing", to: "alice@example.org", wantSent: true},
		{name: "unicode local part without SMTPUTF8", to: "josé@example.org"},
		{name: "unicode domain without SMTPUTF8", to: "alice@bücher.example"},
		{name: "unicode reply-to without SMTPUTF8", to: "alice@example.org", replyTo: "jürgen@example.org"},
		{name: "unicode from without SMTPUTF8", to: "alice@example.org", from: "zoë@idvault.test"},
		{name: "unicode local part with SMTPUTF8", smtputf8: true, to: "josé@example.org", wantSent: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{SMTPUTF8: tc.smtputf8})
			cfg := testConfig(srv)
			if tc.from != "" {
				cfg.From = tc.from
			}
			s, logs := newSender(t, cfg)
			m := codeMessage()
			m.To, m.ReplyTo = tc.to, tc.replyTo
			err := s.Send(context.Background(), m)
			if tc.wantSent {
				require.NoError(t, err)
				msgs := srv.Messages()
				require.Len(t, msgs, 1)
				require.Equal(t, []string{tc.to}, msgs[0].To)
				return
			}
			require.Error(t, err)
			require.Equal(t, mail.StageMessage, mail.Stage(err), "error: %v", err)
			require.False(t, mail.IsTemporary(err))
			require.Contains(t, err.Error(), "SMTPUTF8")
			require.NotContains(t, err.Error(), tc.to)
			requireNoSecrets(t, err.Error()+logs.String())
			require.Zero(t, srv.MessageCount(), "a non-ASCII address went to a server without SMTPUTF8")

			if tc.from != "" {
				require.Equal(t, mail.StageMessage, mail.Stage(s.Check(context.Background())),
					"the readiness check tells a mail.from no send can use")
				return
			}
			require.NoError(t, s.Check(context.Background()))
			// The connection was not spoilt: an ASCII message goes out on it.
			require.NoError(t, s.Send(context.Background(), mail.Message{To: "bob@example.org", Subject: "s", Text: "t"}))
			require.Equal(t, 1, srv.MessageCount())
		})
	}
}
