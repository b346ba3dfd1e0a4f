package config

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"
	"github.com/stretchr/testify/require"
)

func embedded(t *testing.T) []byte {
	raw, err := os.ReadFile(filepath.Join("..", "..", "config.yaml"))
	require.NoError(t, err)
	return raw
}

func TestEmbeddedProfileIsValidLocalDev(t *testing.T) {
	t.Parallel()
	l, err := Load(Sources{Embedded: embedded(t)})
	require.NoError(t, err)
	require.NoError(t, l.Err())
	c := l.Config
	require.Equal(t, "127.0.0.1:8080", c.Server.Listen)
	require.True(t, c.FakeAuth.Enabled, "local-dev profile turns fake authentication on")
	require.Equal(t, "./data/idvault.db", c.Store.Path)
	require.Equal(t, "127.0.0.1", c.Mail.Host)
	require.Equal(t, 1025, c.Mail.Port)
	require.EqualValues(t, "none", c.Mail.TLS)
	require.Equal(t, 30*time.Minute, c.Verification.CodeTTL)
}

func TestBuiltInDefaultsAreProductionSafe(t *testing.T) {
	t.Parallel()
	l, err := Load(Sources{})
	require.NoError(t, err)
	require.False(t, l.Config.FakeAuth.Enabled)
	require.EqualValues(t, "mandatory", l.Config.Mail.TLS)
}

// Every key of the configuration is documented in config.yaml, and config.yaml has no key the
// program does not know.
func TestConfigYAMLDocumentsEveryKey(t *testing.T) {
	t.Parallel()
	l, err := Load(Sources{})
	require.NoError(t, err)
	known := l.K.Keys()
	doc := koanf.New(".")
	require.NoError(t, doc.Load(rawbytes.Provider(embedded(t)), yaml.Parser()))
	documented := doc.Keys()
	sort.Strings(known)
	sort.Strings(documented)
	require.Equal(t, known, documented)
	text := string(embedded(t))
	for _, k := range known {
		last := k[strings.LastIndex(k, ".")+1:]
		indent := strings.Repeat("  ", strings.Count(k, ".")) // two spaces per level
		i := strings.Index(text, "\n"+indent+last+":")
		require.GreaterOrEqual(t, i, 0, "key %s", k)
		before := text[:i]
		prev := before[strings.LastIndex(before, "\n")+1:]
		require.Contains(t, prev, "#", "key %s has a comment line just above it", k)
	}
}

func TestLayersOverrideInOrder(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(file, []byte("server:\n  listen: 127.0.0.1:9000\nlog:\n  level: debug\nmail:\n  host: smtp.example.com\n  from: a@example.com\n"), 0o600))
	l, err := Load(Sources{
		Embedded: embedded(t), File: file,
		Environ: []string{"IDVAULT_LOG__LEVEL=warn", "IDVAULT_SERVER__READ_TIMEOUT=3s", "IDVAULT_MAIL__PORT=2525",
			"IDVAULT_SERVER__TRUSTED_PROXIES=10.0.0.1,192.168.0.0/16", "IDVAULT_IDENTITY_SERVER__TOKEN=0123456789abcdef", "OTHER=1"},
		Flags: map[string]any{"server.listen": "127.0.0.1:9100"},
	})
	require.NoError(t, err)
	require.NoError(t, l.Err())
	c := l.Config
	require.Equal(t, "127.0.0.1:9100", c.Server.Listen, "flag beats file")
	require.Equal(t, "warn", c.Log.Level, "env beats file")
	require.Equal(t, 3*time.Second, c.Server.ReadTimeout)
	require.Equal(t, 2525, c.Mail.Port)
	require.Equal(t, []string{"10.0.0.1", "192.168.0.0/16"}, c.Server.TrustedProxies)
	require.Equal(t, "0123456789abcdef", c.IdentityServer.Token)
	require.False(t, c.FakeAuth.Enabled, "a given file replaces the embedded local-dev profile")
	require.Contains(t, l.Profile, file)

	l, err = Load(Sources{Embedded: embedded(t), Environ: []string{"IDVAULT_LOG__LEVEL=warn"}})
	require.NoError(t, err)
	require.Equal(t, "warn", l.Config.Log.Level, "env beats the embedded profile")
	require.True(t, l.Config.FakeAuth.Enabled, "embedded profile in force without --config")
	require.Contains(t, l.Profile, "local-dev")
}

// A production file that names only what it needs must not inherit the local-dev profile:
// mail goes out over mandatory STARTTLS and fake authentication stays off.
func TestMinimalProductionFileGetsProductionDefaults(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "prod.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
server:
  listen: 0.0.0.0:8080
store:
  path: /var/lib/idvault/idvault.db
  key_file: /var/lib/idvault/master.key
mail:
  host: smtp.example.com
  from: no-reply@example.com
  username: idvault
  password: smtp-password-123
`), 0o600))
	l, err := Load(Sources{Embedded: embedded(t), File: file})
	require.NoError(t, err)
	require.NoError(t, l.Err())
	c := l.Config
	require.EqualValues(t, "mandatory", c.Mail.TLS, "mail.tls left out means mandatory, not the dev profile's none")
	require.Equal(t, 587, c.Mail.Port)
	require.False(t, c.FakeAuth.Enabled, "fake authentication is off unless the file turns it on")
	require.False(t, c.IdentityServer.Enabled)
	require.NotContains(t, l.Profile, "local-dev")
}

// tls: none towards a non-loopback host with a password is a problem unless explicitly allowed.
func TestPlaintextAuthToRemoteHostNeedsExplicitOptIn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, extra string
		problem     bool
	}{
		{"remote host, none, password", "  host: smtp.example.com\n  tls: none\n", true},
		{"remote host, none, password, allowed", "  host: smtp.example.com\n  tls: none\n  allow_plaintext_auth: true\n", false},
		{"loopback host, none, password", "  host: 127.0.0.1\n  tls: none\n", false},
		{"remote host, mandatory, password", "  host: smtp.example.com\n", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			file := filepath.Join(t.TempDir(), "c.yaml")
			body := "mail:\n  from: a@example.com\n  username: u\n  password: smtp-password-123\n" + tc.extra
			require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
			l, err := Load(Sources{Embedded: embedded(t), File: file})
			require.NoError(t, err)
			if !tc.problem {
				require.NoError(t, l.Err())
				return
			}
			require.ErrorContains(t, l.Err(), "mail.tls")
			require.NotContains(t, l.Err().Error(), "smtp-password-123")
		})
	}
	// Without --config the dev profile's tls: none must not carry a password to a remote host
	// either (the host set from the environment).
	l, err := Load(Sources{Embedded: embedded(t), Environ: []string{"IDVAULT_MAIL__HOST=smtp.example.com",
		"IDVAULT_MAIL__USERNAME=u", "IDVAULT_MAIL__PASSWORD=smtp-password-123"}})
	require.NoError(t, err)
	require.ErrorContains(t, l.Err(), "mail.tls")
}

func TestValidationReportsEveryProblemByKey(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "bad.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
server:
  listen: "nonsense"
  body_limit: 10
  lisen: typo
log:
  level: loud
mail:
  tls: maybe
  port: 0
verification:
  code_ttl: -1s
  max_wrong_attempts: 0
fakeauth:
  max_emails: 0
identity_server:
  enabled: true
  app_id: "zzz"
apps:
  - name: broken
    secret: "nope"
`), 0o600))
	l, err := Load(Sources{Embedded: embedded(t), File: file})
	require.NoError(t, err)
	err = l.Err()
	require.Error(t, err)
	msg := err.Error()
	for _, key := range []string{"server.listen", "server.body_limit", "server.lisen: unknown key", "log.level", "mail.tls", "mail.port",
		"verification.code_ttl", "verification.max_wrong_attempts", "fakeauth.max_emails", "identity_server.app_id",
		"apps[0].secret", "apps[0].auth_token"} {
		require.Contains(t, msg, key)
	}
}

func TestRemoteListenNeedsExplicitOptIns(t *testing.T) {
	t.Parallel()
	env := []string{"IDVAULT_SERVER__LISTEN=0.0.0.0:8080", "IDVAULT_IDENTITY_SERVER__ENABLED=true",
		"IDVAULT_IDENTITY_SERVER__APP_ID=tpoxyNzh0hU9G2i9agMvHyyd+pO6zGCjO9BfhrCLjd4="}
	l, err := Load(Sources{Embedded: embedded(t), Environ: env})
	require.NoError(t, err)
	msg := l.Err().Error()
	require.Contains(t, msg, "fakeauth.enabled")
	require.Contains(t, msg, "identity_server.token")

	l, err = Load(Sources{Embedded: embedded(t), Environ: append(env,
		"IDVAULT_FAKEAUTH__ALLOW_REMOTE=true", "IDVAULT_IDENTITY_SERVER__ALLOW_UNAUTHENTICATED=true")})
	require.NoError(t, err)
	require.NoError(t, l.Err())
}

func TestRedactedHidesSecrets(t *testing.T) {
	t.Parallel()
	env := []string{"IDVAULT_MAIL__PASSWORD=hunter2-smtp", "IDVAULT_MAIL__USERNAME=u", "IDVAULT_ADMIN__TOKEN=admin-token-0123456789",
		"IDVAULT_IDENTITY_SERVER__TOKEN=idserver-token-0123"}
	l, err := Load(Sources{Embedded: embedded(t), Environ: env})
	require.NoError(t, err)
	out := strings.Join(l.Redacted(), "\n")
	for _, secret := range []string{"hunter2-smtp", "admin-token-0123456789", "idserver-token-0123"} {
		require.NotContains(t, out, secret)
	}
	require.Contains(t, out, "mail.password = <redacted>")
	require.Contains(t, out, "admin.token_file = ")
	require.Contains(t, out, "server.listen = 127.0.0.1:8080")
}

func TestDecodeErrorHidesValue(t *testing.T) {
	t.Parallel()
	l, err := Load(Sources{Embedded: embedded(t), Environ: []string{"IDVAULT_MAIL__PORT=secret-looking-value"}})
	require.NoError(t, err)
	msg := l.Err().Error()
	require.Contains(t, msg, "mail")
	require.NotContains(t, msg, "secret-looking-value")
}

func TestBrokenYAMLFailsLoad(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "broken.yaml")
	require.NoError(t, os.WriteFile(file, []byte("server: [unclosed"), 0o600))
	_, err := Load(Sources{File: file})
	require.ErrorContains(t, err, file)
	_, err = Load(Sources{File: filepath.Join(t.TempDir(), "missing.yaml")})
	require.Error(t, err)
}

// Every limit of the servers is checked, each problem naming its key.
func TestServerLimitsAreValidated(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "limits.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`
server:
  max_connections: 0
  max_connections_per_ip: -1
exit:
  allowed_hosts: ["bad host!"]
  max_connections: 2000000
  max_connections_per_ip: 0
  header_timeout: 0s
  body_idle_timeout: 48h
  idle_timeout: -1s
  max_body: 64MiB
  memory_budget: 100MiB
`), 0o600))
	l, err := Load(Sources{Embedded: embedded(t), File: file})
	require.NoError(t, err)
	err = l.Err()
	require.Error(t, err)
	for _, key := range []string{"server.max_connections:", "server.max_connections_per_ip:", "exit.allowed_hosts[0]",
		"exit.max_connections:", "exit.max_connections_per_ip:", "exit.header_timeout", "exit.body_idle_timeout",
		"exit.idle_timeout", "exit.memory_budget: must be at least 201326592 bytes"} {
		require.Contains(t, err.Error(), key)
	}
	d := Default()
	require.Equal(t, 4096, d.Server.MaxConnections)
	require.Equal(t, int64(256<<20), d.Exit.MemoryBudgetBytes())
	require.Empty(t, d.Exit.validate(), "the exit defaults are valid")
}

// config check prints a default duration as a file would write it (15m, not 15m0s), so the
// embedded profile, a file and the built-in defaults print alike.
func TestRedactedDurationsAsWritten(t *testing.T) {
	t.Parallel()
	for d, want := range map[time.Duration]string{15 * time.Minute: "15m", 24 * time.Hour: "24h", 90 * time.Minute: "1h30m",
		time.Minute + 500*time.Millisecond: "1m0.5s", 10 * time.Second: "10s", 0: "0s", time.Millisecond: "1ms"} {
		require.Equal(t, want, short(d), "%v", d)
	}
	l, err := Load(Sources{})
	require.NoError(t, err)
	require.Contains(t, l.Redacted(), "admin.lock_duration = 15m")
	require.Contains(t, l.Redacted(), "identity_server.oidc.new_identities_window = 24h")
}

// config.yaml says that a "default:" note gives the built-in value wherever the local-dev
// profile differs from it: every such key has the note, and every note says what `config
// check` prints for a file that leaves the key out.
func TestConfigYAMLDefaultNotesMatchBuiltIns(t *testing.T) {
	t.Parallel()
	values := func(l *Loaded) map[string]string {
		m := map[string]string{}
		for _, line := range l.Redacted() {
			k, v, ok := strings.Cut(line, " = ")
			require.True(t, ok, line)
			if d, err := time.ParseDuration(v); err == nil {
				v = d.String()
			}
			m[k] = v
		}
		return m
	}
	builtIn, err := Load(Sources{})
	require.NoError(t, err)
	dev, err := Load(Sources{Embedded: embedded(t)})
	require.NoError(t, err)
	want, got := values(builtIn), values(dev)
	text := string(embedded(t))
	lines := strings.Split(text, "\n")
	for _, k := range dev.K.Keys() {
		if k == "apps" {
			continue
		}
		at := -1 // the key's line, found part by part under its section
		for depth, part := range strings.Split(k, ".") {
			for at++; at < len(lines) && !strings.HasPrefix(lines[at], strings.Repeat("  ", depth)+part+":"); at++ {
			}
		}
		require.Less(t, at, len(lines), "key %s", k)
		var comment []string
		for i := at - 1; i >= 0 && strings.HasPrefix(strings.TrimSpace(lines[i]), "#"); i-- {
			comment = append([]string{strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(lines[i]), "#"))}, comment...)
		}
		note := strings.Join(comment, " ")
		_, after, noted := strings.Cut(note, "default: ")
		if want[k] != got[k] {
			require.True(t, noted, "%s is %q in config.yaml but %q built in: its comment needs a \"default:\" note", k, got[k], want[k])
		}
		if noted {
			said := strings.Fields(after)[0]
			said = strings.TrimSuffix(strings.Trim(said, `"`), ".")
			if d, err := time.ParseDuration(said); err == nil {
				said = d.String()
			}
			require.Equal(t, want[k], said, "%s: the \"default:\" note says %q, config check prints %q", k, said, want[k])
		}
	}
}
