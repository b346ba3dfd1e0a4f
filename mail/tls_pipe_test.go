//go:build unix

package mail_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

// A process reads mail.ca_file once: a ca_file that can be read only once (a named pipe, as a
// process substitution or a secrets agent hands over) serves both the configuration check and
// New, as `idvault serve` runs them, and mail goes through the server that CA signed. Once the
// pipe's one reader has opened it, the path is replaced by a file that holds no certificate, so
// a second read would fail with "no PEM certificate" (and never wait on the pipe).
func TestCAFileReadOnce(t *testing.T) {
	t.Parallel()
	ca, err := mailtest.NewPrivateCA("smtp.private.test")
	require.NoError(t, err)
	dir := t.TempDir()
	caFile, notPEM := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "not.pem")
	require.NoError(t, syscall.Mkfifo(caFile, 0o600))
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	written := make(chan error, 1)
	go func() { written <- writeOnce(caFile, notPEM, ca.PEM) }()

	srv := mailtest.Start(t, mailtest.Options{StartTLS: true, Certificate: &ca.Server})
	cfg := testConfig(srv)
	cfg.TLS, cfg.CAFile, cfg.ServerName = mail.TLSMandatory, caFile, "smtp.private.test"
	cfg.Timeout = 5 * time.Second
	require.NoError(t, cfg.Validate(), "the configuration check idvault serve runs before New")
	s, err := mail.New(cfg, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, <-written)
	require.NoError(t, s.Send(context.Background(), codeMessage()))
	require.Equal(t, 1, srv.MessageCount())
}

// writeOnce writes content to the first reader of the named pipe at path, after replacing path
// by the file then (the open for writing returns once a reader has opened the pipe).
func writeOnce(path, then string, content []byte) error {
	w, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	if err := os.Rename(then, path); err != nil {
		_ = w.Close()
		return err
	}
	_, err = w.Write(content)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	return err
}
