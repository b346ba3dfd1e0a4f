// Package config loads idvault's configuration with koanf, in layers (each overrides the one
// before): built-in defaults (Default, production-safe), then one profile file, then
// environment variables IDVAULT_<SECTION>__<KEY>, then command-line flags. The profile file is
// the one given with --config; without --config it is the embedded config.yaml (the local-dev
// profile). A given file replaces the embedded profile, so production never inherits dev values. Each component reads only its own section; Validate reports every problem at once.
package config

import (
	"time"

	"github.com/idvault/idvault/mail/mailconfig"
)

// Mail is the `mail` section (package mailconfig; package mail sends with it).
type Mail = mailconfig.Config

// Config is the whole configuration. The koanf tags are the keys of config.yaml.
type Config struct {
	Server         Server         `koanf:"server"`
	Log            Log            `koanf:"log"`
	Store          Store          `koanf:"store"`
	Admin          Admin          `koanf:"admin"`
	Console        Console        `koanf:"console"`
	Metrics        Metrics        `koanf:"metrics"`
	FakeAuth       FakeAuth       `koanf:"fakeauth"`
	IdentityServer IdentityServer `koanf:"identity_server"`
	Verification   Verification   `koanf:"verification"`
	Mail           Mail           `koanf:"mail"`
	Apps           []DeclaredApp  `koanf:"apps"`
	Exit           Exit           `koanf:"exit"`
}

// Server is the HTTP listener.
type Server struct {
	Listen          string        `koanf:"listen"`
	ReadTimeout     time.Duration `koanf:"read_timeout"`
	WriteTimeout    time.Duration `koanf:"write_timeout"`
	IdleTimeout     time.Duration `koanf:"idle_timeout"`
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
	BodyLimit       int           `koanf:"body_limit"`
	// TrustedProxies are the addresses (IPs or CIDRs) whose X-Forwarded-For is believed.
	TrustedProxies []string `koanf:"trusted_proxies"`
	// AllowedHosts are the Host header names the server answers (port ignored; "*.example.com"
	// matches subdomains). Empty: on a loopback listen address only loopback names and the
	// listen host; on any other address, any host. Other hosts get a JSON 421.
	AllowedHosts []string `koanf:"allowed_hosts"`
	// MaxConnections is the most connections open at once; more are answered 503 and closed
	// (lowered at start to fit under the process's open-file limit).
	MaxConnections int `koanf:"max_connections"`
	// MaxConnectionsPerIP is the most connections open at once from one client address
	// (trusted_proxies are not counted: their clients share the proxy's address).
	MaxConnectionsPerIP int `koanf:"max_connections_per_ip"`
}

// Log is the structured logger.
type Log struct {
	Level  string `koanf:"level"`  // debug, info, warn, error
	Format string `koanf:"format"` // text or json
}

// Store is the bbolt data file and the master key that seals secrets in it.
type Store struct {
	Path string `koanf:"path"`
	// KeyFile is the master key (default, when empty: master.key beside the data file).
	KeyFile     string        `koanf:"key_file"`
	LockTimeout time.Duration `koanf:"lock_timeout"`
	// RecordCacheMiB bounds the in-memory cache of identity records (0 turns it off): known
	// emails are then answered without a read transaction or an unsealing. It holds private
	// identities in process memory, never on disk.
	RecordCacheMiB int `koanf:"record_cache_mib"`
}

// FakeAuth is the fake authentication server (development and tests only).
type FakeAuth struct {
	Enabled     bool `koanf:"enabled"`
	AllowRemote bool `koanf:"allow_remote"`
	MaxEmails   int  `koanf:"max_emails"`
}

// IdentityServer is the reference identity server.
type IdentityServer struct {
	Enabled              bool   `koanf:"enabled"`
	AppID                string `koanf:"app_id"`
	Token                string `koanf:"token"`
	AllowUnauthenticated bool   `koanf:"allow_unauthenticated"`
	// OIDC lets clients call the identity server with an OpenID Connect ID token instead of
	// the app token (identity_server.go).
	OIDC OIDC `koanf:"oidc"`
	// CORSOrigins are the exact origins (scheme://host[:port]) whose web pages may call the
	// identity server from a browser, written as browsers send them (checkOrigin).
	CORSOrigins []string `koanf:"cors_origins"`
}

// DeclaredApp is an app declared in the config file (infrastructure as code). It is read-only
// at runtime: the admin API cannot rotate its token or delete it.
type DeclaredApp struct {
	Name string `koanf:"name"`
	// Secret is the b64 64-byte app secret; the app ID is derived from it.
	Secret string `koanf:"secret"`
	// AuthToken is the clear auth token, or AuthTokenSHA256 its hex SHA-256 (one of the two).
	AuthToken           string `koanf:"auth_token"`
	AuthTokenSHA256     string `koanf:"auth_token_sha256"`
	Test                bool   `koanf:"test"`
	LegacyErrors        bool   `koanf:"legacy_errors"`
	RegisteredUsersOnly bool   `koanf:"registered_users_only"`
}

// Default is the built-in layer: production-safe values (fake authentication off, mail over
// mandatory STARTTLS). Without --config the embedded config.yaml sets the local-dev profile on
// top; with --config the given file does instead.
func Default() Config {
	return Config{
		Server: Server{
			Listen: "127.0.0.1:8080", ReadTimeout: 10 * time.Second, WriteTimeout: 30 * time.Second,
			IdleTimeout: 60 * time.Second, ShutdownTimeout: 15 * time.Second, BodyLimit: 1 << 20,
			TrustedProxies: []string{}, AllowedHosts: []string{},
			MaxConnections: 4096, MaxConnectionsPerIP: 512,
		},
		Log:            Log{Level: "info", Format: "text"},
		Store:          Store{Path: "./data/idvault.db", LockTimeout: time.Second, RecordCacheMiB: 32},
		Admin:          DefaultAdmin(),
		Console:        Console{Enabled: "auto"},
		Metrics:        DefaultMetrics(),
		FakeAuth:       FakeAuth{MaxEmails: 100},
		IdentityServer: DefaultIdentityServer(),
		Verification:   DefaultVerification(),
		Mail:           mailconfig.Default(),
		Apps:           []DeclaredApp{},
		Exit:           DefaultExit(),
	}
}
