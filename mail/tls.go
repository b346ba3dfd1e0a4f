package mail

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"sync"
)

// tlsConfig is the TLS client configuration towards the SMTP server: the system's roots plus
// the certificates of mail.ca_file (a private CA), and the name the certificate must carry,
// mail.server_name or else mail.host.
func (c Config) tlsConfig() (*tls.Config, error) {
	cfg := &tls.Config{
		ServerName:         c.Host,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: c.TLSSkipVerify, //nolint:gosec // opt-in, for dev mail catchers; warned at start
	}
	if c.ServerName != "" {
		cfg.ServerName = c.ServerName
	}
	if c.CAFile != "" {
		roots, err := loadRoots(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = roots
	}
	return cfg, nil
}

// caFiles holds the pool loadRoots made for each mail.ca_file path (path -> *x509.CertPool): a
// process reads the file and the system's pool once, however often its configuration is checked
// and senders are made. `idvault serve` checks the configuration (config.Validate, which checks
// mail.ca_file) and then makes the sender (New), and a file that can be read only once, such as
// a named pipe, must serve both. A failed load is not kept.
var caFiles sync.Map

// loadRoots is the system's certificate pool (empty where the system has none) with the PEM
// certificates of file added, read once per process (caFiles).
func loadRoots(file string) (*x509.CertPool, error) {
	if roots, ok := caFiles.Load(file); ok {
		return roots.(*x509.CertPool), nil
	}
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("mail.ca_file: %w", err)
	}
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("mail.ca_file: no PEM certificate in %s", file)
	}
	caFiles.Store(file, roots)
	return roots, nil
}

// tlsHint explains the certificate failures a configuration can fix: an unknown authority
// (a private CA not given in mail.ca_file) and a certificate for another name (the host
// dialled by IP address or by another name than the certificate's: mail.server_name).
func tlsHint(err error) error {
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	switch {
	case errors.As(err, &unknownAuth):
		return fmt.Errorf("%w (the SMTP server's certificate is signed by a CA this machine does not trust: give that CA's certificate in mail.ca_file)", err)
	case errors.As(err, &hostErr):
		return fmt.Errorf("%w (set mail.server_name to the name the SMTP server's certificate carries)", err)
	}
	return err
}

// skipVerifyWarning is logged by New when mail.tls_skip_verify is on.
const skipVerifyWarning = "mail.tls_skip_verify is on: the SMTP server's certificate is not checked, so anyone on the path can read the mail and the SMTP password; give a private CA in mail.ca_file instead"
