package mail_test

import (
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
)

func validConfig() mail.Config {
	cfg := mail.DefaultConfig()
	cfg.Host = "smtp.example.org"
	cfg.From = "no-reply@idvault.test"
	return cfg
}

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name     string
		mutate   func(*mail.Config)
		wantKeys []string // nil: valid
	}{
		{name: "defaults plus host and from", mutate: func(*mail.Config) {}},
		{name: "every tls mode", mutate: func(c *mail.Config) { c.TLS = mail.TLSImplicit }},
		{name: "credentials", mutate: func(c *mail.Config) { c.Username, c.Password = "u", "p" }},
		{name: "zero pool size and idle timeout mean defaults",
			mutate: func(c *mail.Config) { c.PoolSize, c.IdleTimeout = 0, 0 }},
		{name: "missing host", mutate: func(c *mail.Config) { c.Host = "" }, wantKeys: []string{"mail.host"}},
		{name: "port zero", mutate: func(c *mail.Config) { c.Port = 0 }, wantKeys: []string{"mail.port"}},
		{name: "port too big", mutate: func(c *mail.Config) { c.Port = 65536 }, wantKeys: []string{"mail.port"}},
		{name: "unknown tls", mutate: func(c *mail.Config) { c.TLS = "starttls" }, wantKeys: []string{"mail.tls"}},
		{name: "empty tls", mutate: func(c *mail.Config) { c.TLS = "" }, wantKeys: []string{"mail.tls"}},
		{name: "missing from", mutate: func(c *mail.Config) { c.From = "" }, wantKeys: []string{"mail.from"}},
		{name: "invalid from", mutate: func(c *mail.Config) { c.From = "not an address" },
			wantKeys: []string{"mail.from"}},
		{name: "from with display name", mutate: func(c *mail.Config) { c.From = "idvault <a@b.test>" },
			wantKeys: []string{"mail.from"}},
		{name: "zero timeout", mutate: func(c *mail.Config) { c.Timeout = 0 }, wantKeys: []string{"mail.timeout"}},
		{name: "negative timeout", mutate: func(c *mail.Config) { c.Timeout = -time.Second },
			wantKeys: []string{"mail.timeout"}},
		{name: "username without password", mutate: func(c *mail.Config) { c.Username = "u" },
			wantKeys: []string{"mail.username"}},
		{name: "password without username", mutate: func(c *mail.Config) { c.Password = "p" },
			wantKeys: []string{"mail.username"}},
		{name: "tls none with a password to a loopback name in capitals",
			mutate: func(c *mail.Config) { c.Host, c.TLS, c.Username, c.Password = "LOCALHOST.", mail.TLSNone, "u", "p" }},
		{name: "tls none with a password to a remote host", wantKeys: []string{"mail.tls"},
			mutate: func(c *mail.Config) { c.TLS, c.Username, c.Password = mail.TLSNone, "u", "p" }},
		{name: "negative pool size", mutate: func(c *mail.Config) { c.PoolSize = -1 },
			wantKeys: []string{"mail.pool_size"}},
		{name: "multi-line from_name", mutate: func(c *mail.Config) { c.FromName = "a\r\nBcc: x@y" },
			wantKeys: []string{"mail.from_name"}},
		{name: "several problems at once",
			mutate: func(c *mail.Config) {
				*c = mail.Config{TLS: "tls", Password: "hunter2"}
			},
			wantKeys: []string{"mail.host", "mail.port", "mail.tls", "mail.from", "mail.timeout", "mail.username"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := validConfig()
			tc.mutate(&cfg)
			err := cfg.Validate()
			if tc.wantKeys == nil {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			joined, ok := err.(interface{ Unwrap() []error })
			require.True(t, ok, "Validate returns errors.Join")
			require.Len(t, joined.Unwrap(), len(tc.wantKeys), "errors: %v", err)
			for i, key := range tc.wantKeys {
				require.True(t, strings.HasPrefix(joined.Unwrap()[i].Error(), key+":"),
					"error %d %q should name %s", i, joined.Unwrap()[i], key)
			}
			require.NotContains(t, err.Error(), "hunter2")

			_, newErr := mail.New(cfg, nil)
			require.Error(t, newErr)
			require.Contains(t, newErr.Error(), tc.wantKeys[0])
		})
	}
}

func TestConfigNeverPrintsPassword(t *testing.T) {
	cfg := validConfig()
	cfg.Username, cfg.Password = "idv", "hunter2"

	r := cfg.Redacted()
	require.Equal(t, "[redacted]", r.Password)
	require.Equal(t, "hunter2", cfg.Password, "Redacted returns a copy")

	var logs strings.Builder
	slog.New(slog.NewTextHandler(&logs, nil)).Info("config", "mail", cfg)
	for _, s := range []string{cfg.String(), fmt.Sprint(cfg), fmt.Sprintf("%+v", cfg),
		fmt.Sprintf("%#v", cfg), logs.String()} {
		require.NotContains(t, s, "hunter2")
		require.Contains(t, s, "smtp.example.org")
	}
	require.Contains(t, cfg.String(), "[redacted]")

	cfg.Password = ""
	require.Empty(t, cfg.Redacted().Password, "an unset password stays visibly unset")
}

func TestDefaultConfig(t *testing.T) {
	cfg := mail.DefaultConfig()
	require.Equal(t, mail.TLSMandatory, cfg.TLS)
	require.Equal(t, mail.DefaultPoolSize, cfg.PoolSize)
	require.Equal(t, mail.DefaultIdleTimeout, cfg.IdleTimeout)
	require.Positive(t, cfg.Timeout)
	require.False(t, cfg.TLSSkipVerify)
}
