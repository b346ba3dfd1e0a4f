// Package mailconfig is the `mail` section of idvault's configuration: its keys, defaults,
// validation and redacted printing. It holds no SMTP code (that is package mail, which takes this
// Config), so that the configuration loader reads and checks the section without go-mail:
// standard library and app/loopback only.
package mailconfig

import (
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net/mail"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/idvault/idvault/app/loopback"
)

// TLSMode is the transport security policy towards the SMTP server.
type TLSMode string

// TLS policies (values of the `mail.tls` key).
const (
	// TLSMandatory requires STARTTLS; a server that does not offer it fails at StageTLS.
	TLSMandatory TLSMode = "mandatory"
	// TLSOpportunistic uses STARTTLS when the server offers it and plain SMTP otherwise.
	TLSOpportunistic TLSMode = "opportunistic"
	// TLSNone never uses TLS.
	TLSNone TLSMode = "none"
	// TLSImplicit speaks TLS from the first byte (SMTPS, usually port 465).
	TLSImplicit TLSMode = "ssl"
)

// Defaults applied by mail.New (and returned by Default) for keys left at their zero value.
const (
	DefaultPoolSize    = 4
	DefaultIdleTimeout = 30 * time.Second
	DefaultTimeout     = 15 * time.Second
	DefaultPort        = 587
)

const redacted = "[redacted]"

// Config is the `mail` section of idvault's configuration.
type Config struct {
	// Host is the SMTP server's host name or IP address.
	Host string `koanf:"host"`
	// Port is the SMTP server's port.
	Port int `koanf:"port"`
	// TLS is the transport security policy: mandatory, opportunistic, none or ssl.
	TLS TLSMode `koanf:"tls"`
	// TLSSkipVerify disables certificate verification (development mail catchers with
	// self-signed certificates only).
	TLSSkipVerify bool `koanf:"tls_skip_verify"`
	// CAFile is a PEM file of CA certificates trusted beside the system's roots, for an SMTP
	// server whose certificate a private CA signed.
	CAFile string `koanf:"ca_file"`
	// ServerName is the name the SMTP server's certificate must carry, when it is not Host
	// (a server dialled by IP address, or through another name).
	ServerName string `koanf:"server_name"`
	// Username and Password enable SMTP AUTH (PLAIN, else LOGIN, else CRAM-MD5) when set.
	Username string `koanf:"username"`
	// Password is the SMTP AUTH secret. It never appears in errors, String or logs.
	Password string `koanf:"password"`
	// AllowPlaintextAuth accepts TLS none with credentials towards a non-loopback host, that
	// is, the password sent in clear over the network. Validate refuses that combination
	// without it.
	AllowPlaintextAuth bool `koanf:"allow_plaintext_auth"`
	// From is idvault's sender address, used for the envelope and the From header.
	From string `koanf:"from"`
	// FromName is the display name of the From header, unless a Message overrides it.
	FromName string `koanf:"from_name"`
	// HELO is the name sent with EHLO; empty means the machine's host name.
	HELO string `koanf:"helo"`
	// Timeout bounds one whole send (waiting for a connection, dialling, and the SMTP
	// transaction), and one Check.
	Timeout time.Duration `koanf:"timeout"`
	// PoolSize is the maximum number of SMTP connections open at once (idle or in use).
	// 0 means DefaultPoolSize.
	PoolSize int `koanf:"pool_size"`
	// IdleTimeout closes pooled connections unused for that long. 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration `koanf:"idle_timeout"`
}

// Default returns a Config holding the defaults, for use as the configuration loader's
// base layer. Host and From have no default.
func Default() Config {
	return Config{
		Port:        DefaultPort,
		TLS:         TLSMandatory,
		Timeout:     DefaultTimeout,
		PoolSize:    DefaultPoolSize,
		IdleTimeout: DefaultIdleTimeout,
	}
}

// WithDefaults fills the keys whose zero value means "default".
func (c Config) WithDefaults() Config {
	if c.PoolSize == 0 {
		c.PoolSize = DefaultPoolSize
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	return c
}

// Validate checks every key and returns all problems joined (errors.Join), each naming its
// key as `mail.<key>`, or nil. Zero PoolSize and IdleTimeout are valid (defaults apply).
func (c Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("mail.%s: "+format, append([]any{key}, args...)...))
	}
	switch {
	case strings.TrimSpace(c.Host) == "":
		bad("host", "is required")
	case strings.ContainsAny(c.Host, " \t\r\n/"):
		bad("host", "must be a host name or IP address")
	}
	if c.Port < 1 || c.Port > 65535 {
		bad("port", "must be between 1 and 65535, got %d", c.Port)
	}
	switch c.TLS {
	case TLSMandatory, TLSOpportunistic, TLSNone, TLSImplicit:
	default:
		bad("tls", "must be one of mandatory, opportunistic, none, ssl, got %q", string(c.TLS))
	}
	if c.From == "" {
		bad("from", "is required")
	} else if err := CheckBareAddress(c.From); err != nil {
		bad("from", "%v", err)
	}
	if strings.ContainsAny(c.FromName, "\r\n") {
		bad("from_name", "must be a single line")
	}
	if c.CAFile != "" {
		if _, err := Roots(c.CAFile); err != nil {
			errs = append(errs, err)
		}
	}
	if strings.ContainsAny(c.ServerName, " \t\r\n/") {
		bad("server_name", "must be a host name")
	}
	if strings.ContainsAny(c.HELO, " \t\r\n") {
		bad("helo", "must be a single host name")
	}
	if c.Timeout <= 0 {
		bad("timeout", "must be greater than 0, got %s", c.Timeout)
	} else if c.Timeout > time.Hour {
		bad("timeout", "must be at most 1h, got %s", c.Timeout)
	}
	if (c.Username == "") != (c.Password == "") {
		bad("username", "and mail.password must be set together (both or neither)")
	}
	if c.TLS == TLSNone && c.Password != "" && !loopback.IsHost(c.Host) && !c.AllowPlaintextAuth {
		bad("tls", "is none with a password towards a non-loopback host: the password would cross the network in clear; use mandatory or ssl (or set mail.allow_plaintext_auth: true)")
	}
	if c.PoolSize < 0 {
		bad("pool_size", "must not be negative, got %d", c.PoolSize)
	}
	if c.IdleTimeout < 0 || c.IdleTimeout > 24*time.Hour {
		bad("idle_timeout", "must be between 0 and 24h, got %s", c.IdleTimeout)
	}
	return errors.Join(errs...)
}

// CheckBareAddress accepts "user@example.com" and rejects display-name forms and garbage.
// Its error never repeats the address.
func CheckBareAddress(s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil {
		return errors.New("is not a valid email address")
	}
	if a.Name != "" || a.Address != strings.TrimSpace(s) {
		return errors.New("must be a bare address like user@example.com (no display name)")
	}
	return nil
}

// Redacted returns a copy of c safe to print: the password is replaced by "[redacted]"
// when set.
func (c Config) Redacted() Config {
	if c.Password != "" {
		c.Password = redacted
	}
	return c
}

// String renders the configuration for "config check" output, with the password redacted.
func (c Config) String() string {
	r := c.Redacted()
	return fmt.Sprintf("host=%s port=%d tls=%s tls_skip_verify=%t ca_file=%q server_name=%q username=%q password=%q "+
		"allow_plaintext_auth=%t from=%s from_name=%q helo=%q timeout=%s pool_size=%d idle_timeout=%s",
		r.Host, r.Port, r.TLS, r.TLSSkipVerify, r.CAFile, r.ServerName, r.Username, r.Password, r.AllowPlaintextAuth,
		r.From, r.FromName, r.HELO, r.Timeout, r.PoolSize, r.IdleTimeout)
}

// GoString keeps %#v from printing the password.
func (c Config) GoString() string { return "mail.Config{" + c.String() + "}" }

// LogValue implements slog.LogValuer, with the password redacted.
func (c Config) LogValue() slog.Value {
	r := c.Redacted()
	return slog.GroupValue(
		slog.String("host", r.Host),
		slog.Int("port", r.Port),
		slog.String("tls", string(r.TLS)),
		slog.Bool("tls_skip_verify", r.TLSSkipVerify),
		slog.String("ca_file", r.CAFile),
		slog.String("server_name", r.ServerName),
		slog.String("username", r.Username),
		slog.String("password", r.Password),
		slog.Bool("allow_plaintext_auth", r.AllowPlaintextAuth),
		slog.String("from", r.From),
		slog.String("from_name", r.FromName),
		slog.String("helo", r.HELO),
		slog.Duration("timeout", r.Timeout),
		slog.Int("pool_size", r.PoolSize),
		slog.Duration("idle_timeout", r.IdleTimeout),
	)
}

// caFiles holds the pool Roots made for each mail.ca_file path (path -> *x509.CertPool): a
// process reads the file and the system's pool once, however often its configuration is checked
// and senders are made. `idvault serve` checks the configuration (config.Validate, which checks
// mail.ca_file) and then makes the sender (mail.New), and a file that can be read only once, such as
// a named pipe, must serve both. A failed load is not kept.
var caFiles sync.Map

// Roots is the system's certificate pool (empty where the system has none) with the PEM
// certificates of file added, read once per process (caFiles).
func Roots(file string) (*x509.CertPool, error) {
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
