package mail_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

// An SMTP server whose certificate a private CA signed, over STARTTLS and implicit TLS: mail
// goes through once mail.ca_file holds the CA (and mail.server_name the certificate's name,
// the server being dialled by IP address); without the CA, or without the name, the send is
// refused at the TLS stage with an error that says which key to set.
func TestPrivateCA(t *testing.T) {
	t.Parallel()
	ca, err := mailtest.NewPrivateCA("smtp.private.test")
	require.NoError(t, err)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	require.NoError(t, os.WriteFile(caFile, ca.PEM, 0o644))

	for _, transport := range []struct {
		name   string
		server mailtest.Options
		tls    mail.TLSMode
	}{
		{"starttls", mailtest.Options{StartTLS: true, Certificate: &ca.Server}, mail.TLSMandatory},
		{"implicit", mailtest.Options{ImplicitTLS: true, Certificate: &ca.Server}, mail.TLSImplicit},
	} {
		for _, tc := range []struct {
			name, caFile, serverName, wantErr string
		}{
			{"ca_file and server_name", caFile, "smtp.private.test", ""},
			{"no ca_file", "", "smtp.private.test", "certificate signed by unknown authority (the SMTP server's certificate is signed by a CA this machine does not trust: give that CA's certificate in mail.ca_file)"},
			{"no server_name", caFile, "", "set mail.server_name to the name the SMTP server's certificate carries"},
		} {
			t.Run(transport.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				srv := mailtest.Start(t, transport.server)
				cfg := testConfig(srv)
				cfg.TLS = transport.tls
				cfg.CAFile, cfg.ServerName = tc.caFile, tc.serverName
				cfg.Timeout = 5 * time.Second
				s, logs := newSender(t, cfg)
				err := s.Send(context.Background(), codeMessage())
				if tc.wantErr == "" {
					require.NoError(t, err)
					msgs := srv.Messages()
					require.Len(t, msgs, 1)
					require.True(t, msgs[0].TLS)
					require.NotContains(t, logs.String(), "tls_skip_verify is on")
					return
				}
				require.Error(t, err)
				require.Equal(t, mail.StageTLS, mail.Stage(err), "%v", err)
				require.False(t, mail.IsTemporary(err))
				require.Contains(t, err.Error(), tc.wantErr)
				require.Zero(t, srv.MessageCount())
			})
		}
	}
}

// tls_skip_verify says at start that the certificate goes unchecked.
func TestSkipVerifyWarnsAtStart(t *testing.T) {
	t.Parallel()
	srv := mailtest.Start(t, mailtest.Options{StartTLS: true})
	cfg := testConfig(srv)
	cfg.TLS, cfg.TLSSkipVerify = mail.TLSMandatory, true
	_, logs := newSender(t, cfg)
	require.Contains(t, logs.String(), "level=WARN")
	require.Contains(t, logs.String(), "mail.tls_skip_verify is on: the SMTP server's certificate is not checked")
	cfg.TLSSkipVerify = false
	_, logs = newSender(t, cfg)
	require.NotContains(t, logs.String(), "tls_skip_verify")
}

// A ca_file that cannot be read, or holds no certificate, is a configuration problem naming the key.
func TestCAFileProblems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("hello"), 0o644))
	srv := mailtest.Start(t, mailtest.Options{})
	for file, want := range map[string]string{
		filepath.Join(dir, "missing.pem"): "mail.ca_file: open " + filepath.Join(dir, "missing.pem") + ": no such file or directory",
		notPEM:                            "mail.ca_file: no PEM certificate in " + notPEM,
	} {
		cfg := testConfig(srv)
		cfg.CAFile = file
		require.ErrorContains(t, cfg.Validate(), want)
		_, err := mail.New(cfg, nil)
		require.ErrorContains(t, err, want)
	}
}
