package mail_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

func TestEndToEndMailDev(t *testing.T) {
	md := mailtest.StartMailDev(t)
	cfg := mail.Config{
		Host:     md.SMTPHost,
		Port:     md.SMTPPort,
		TLS:      mail.TLSNone, // MailDev does not offer STARTTLS
		From:     "no-reply@idvault.test",
		FromName: "idvault",
		HELO:     "idvault.test",
		Timeout:  10 * time.Second,
	}
	s, _ := newSender(t, cfg)
	ctx := context.Background()
	require.NoError(t, s.Check(ctx))

	cases := []struct {
		name string
		msg  mail.Message
	}{
		{
			name: "text and html with names and reply-to",
			msg: mail.Message{
				FromName: "Jürgen von idvault", To: "bob@example.org", ToName: "Bøb Müller",
				ReplyTo: "support@idvault.test", ReplyToName: "Support",
				Subject: "Ihr Bestätigungscode: 482913", Text: "Code: 482913",
				HTML: "<p>Code: <b>482913</b></p>",
			},
		},
		{
			// MailDev offers SMTPUTF8, which a non-ASCII local part needs.
			name: "a non-ASCII local part",
			msg:  mail.Message{To: "zoë@example.org", ToName: "Zoë", Subject: "Code", Text: "Code: 555666"},
		},
		{
			name: "a subject with a word longer than a header line",
			msg: mail.Message{To: "dave@example.org", Text: "Code: 333444",
				Subject: "Code 333444: https://example.org/v?" + strings.Repeat("t0ken", 60)},
		},
		{
			name: "text only, config from_name",
			msg:  mail.Message{To: "carol@example.org", Subject: "Your code", Text: "Code: 111222"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, md.DeleteAll(ctx))
			require.NoError(t, s.Send(ctx, tc.msg))

			emails := md.WaitForEmails(t, 1, 10*time.Second)
			require.Len(t, emails, 1)
			e := emails[0]
			require.Equal(t, tc.msg.Subject, e.Subject)
			require.Equal(t, tc.msg.Text, strings.TrimRight(e.Text, "\r\n"))
			if tc.msg.HTML != "" {
				require.Equal(t, tc.msg.HTML, strings.TrimRight(e.HTML, "\r\n"))
			}
			wantFromName := cfg.FromName
			if tc.msg.FromName != "" {
				wantFromName = tc.msg.FromName
			}
			require.Equal(t, []mailtest.MailDevAddress{{Address: cfg.From, Name: wantFromName}}, e.From)
			require.Equal(t, tc.msg.To, e.Envelope.To[0].Address, "the envelope recipient")
			if tc.msg.To != "zoë@example.org" { // MailDev's header parser reads UTF-8 addresses as Latin-1
				require.Equal(t, []mailtest.MailDevAddress{{Address: tc.msg.To, Name: tc.msg.ToName}}, e.To)
			}
			if tc.msg.ReplyTo != "" {
				require.Equal(t, []mailtest.MailDevAddress{{Address: tc.msg.ReplyTo, Name: tc.msg.ReplyToName}},
					e.ReplyTo)
			} else {
				require.Empty(t, e.ReplyTo)
			}
			require.Equal(t, cfg.From, e.Envelope.From.Address)
			require.NotEmpty(t, e.Headers["message-id"])
			require.NotEmpty(t, e.Headers["date"])
		})
	}

	// Several messages over the reused connection all arrive.
	require.NoError(t, md.DeleteAll(ctx))
	for range 5 {
		require.NoError(t, s.Send(ctx, cases[1].msg))
	}
	require.Len(t, md.WaitForEmails(t, 5, 10*time.Second), 5)
}
