package mail

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"github.com/idvault/idvault/mail/mailconfig"
)

// tlsConfig is the TLS client configuration towards the SMTP server: the system's roots plus
// the certificates of mail.ca_file (a private CA), and the name the certificate must carry,
// mail.server_name or else mail.host.
func tlsConfig(c Config) (*tls.Config, error) {
	cfg := &tls.Config{
		ServerName:         c.Host,
		MinVersion:         tls.VersionTLS12,
		InsecureSkipVerify: c.TLSSkipVerify, //nolint:gosec // opt-in, for dev mail catchers; warned at start
	}
	if c.ServerName != "" {
		cfg.ServerName = c.ServerName
	}
	if c.CAFile != "" {
		roots, err := mailconfig.Roots(c.CAFile)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = roots
	}
	return cfg, nil
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
