package mailtest_test

import (
	"crypto/tls"
	"net/smtp"
	"net/textproto"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail/mailtest"
)

const body = "Subject: hi\r\n\r\nhello\r\n"

func TestServerRecordsAndCounts(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	require.NoError(t, smtp.SendMail(srv.Addr(), nil, "a@x.test", []string{"b@y.test", "c@y.test"}, []byte(body)))
	require.NoError(t, smtp.SendMail(srv.Addr(), nil, "a@x.test", []string{"b@y.test"}, []byte(body)))

	msgs := srv.Messages()
	require.Len(t, msgs, 2)
	require.Equal(t, "a@x.test", msgs[0].From)
	require.Equal(t, []string{"b@y.test", "c@y.test"}, msgs[0].To)
	require.Equal(t, body, string(msgs[0].Data))
	require.False(t, msgs[0].TLS)
	require.Equal(t, 2, srv.Connections())
	require.Equal(t, 2, srv.MessageCount())

	srv.Reset()
	require.Zero(t, srv.MessageCount())
	require.Zero(t, srv.Connections())
}

func TestServerFaults(t *testing.T) {
	cases := []struct {
		name     string
		fault    mailtest.Fault
		wantCode int
	}{
		{name: "550 at RCPT", fault: mailtest.Fault{At: mailtest.AtRcpt, Code: 550}, wantCode: 550},
		{name: "451 at MAIL", fault: mailtest.Fault{At: mailtest.AtMail, Code: 451}, wantCode: 451},
		{name: "554 at DATA", fault: mailtest.Fault{At: mailtest.AtData, Code: 554}, wantCode: 554},
		{name: "drop at RCPT", fault: mailtest.Fault{At: mailtest.AtRcpt, Action: mailtest.Drop}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, mailtest.Options{})
			tc.fault.Times = 1
			srv.SetFault(tc.fault)
			err := smtp.SendMail(srv.Addr(), nil, "a@x.test", []string{"b@y.test"}, []byte(body))
			require.Error(t, err)
			if tc.wantCode != 0 {
				var tpe *textproto.Error
				require.ErrorAs(t, err, &tpe)
				require.Equal(t, tc.wantCode, tpe.Code)
			}
			require.Zero(t, srv.MessageCount())
			// Times: 1 means the next attempt goes through.
			require.NoError(t, smtp.SendMail(srv.Addr(), nil, "a@x.test", []string{"b@y.test"}, []byte(body)))
			require.Equal(t, 1, srv.MessageCount())
		})
	}
}

func TestServerAuthAndStartTLS(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{StartTLS: true, Username: "u", Password: "p"})
	c, err := smtp.Dial(srv.Addr())
	require.NoError(t, err)
	defer c.Close()
	ok, _ := c.Extension("STARTTLS")
	require.True(t, ok)
	require.NoError(t, c.StartTLS(&tls.Config{ServerName: "127.0.0.1", RootCAs: srv.RootCAs()}))
	require.Error(t, c.Mail("a@x.test"), "MAIL before AUTH is refused")
	require.NoError(t, c.Auth(smtp.PlainAuth("", "u", "p", "127.0.0.1")))
	require.NoError(t, c.Mail("a@x.test"))
	require.NoError(t, c.Rcpt("b@y.test"))
	w, err := c.Data()
	require.NoError(t, err)
	_, err = w.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, c.Quit())

	msgs := srv.Messages()
	require.Len(t, msgs, 1)
	require.True(t, msgs[0].TLS)
	require.Equal(t, "u", msgs[0].AuthUser)
}

func TestServerDropConnections(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	c, err := smtp.Dial(srv.Addr())
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.Hello("client.test"))
	require.Equal(t, 1, srv.OpenConnections())
	require.Equal(t, 1, srv.DropConnections())
	require.Error(t, c.Noop())
}
