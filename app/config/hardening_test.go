package config

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func loadFile(t *testing.T, body string, environ ...string) *Loaded {
	t.Helper()
	file := filepath.Join(t.TempDir(), "c.yaml")
	require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
	l, err := Load(Sources{Embedded: embedded(t), File: file, Environ: environ})
	require.NoError(t, err)
	return l
}

const minimal = "mail:\n  host: smtp.example.com\n  from: a@example.com\n"

// config check never prints an unknown key's value, nor any value whose key looks secret.
func TestRedactedNeverPrintsUnknownOrSecretLookingValues(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal+"  smtp_pwd: file-secret-1\nserver:\n  api_key: file-secret-2\n",
		"IDVAULT_MAIL__PASSWD=supersecret", "IDVAULT_ADMIN__TOKN=admin-secret-3")
	out := strings.Join(l.Redacted(), "\n")
	for _, s := range []string{"supersecret", "file-secret-1", "file-secret-2", "admin-secret-3"} {
		require.NotContains(t, out, s)
		require.NotContains(t, l.Err().Error(), s)
	}
	require.Contains(t, out, "mail.passwd = <unknown key: value not shown>")
	require.Contains(t, l.Err().Error(), "mail.passwd: unknown key")
	require.True(t, isSecretKey("server.api_key"))
	require.True(t, isSecretKey("mail.smtp_pwd"))
	require.False(t, isSecretKey("store.key_file"), "a path to a key is not a secret")
}

// Typos that used to be silent: single-underscore variables and keys inside apps[] entries.
func TestSilentTyposBecomeProblems(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal+`apps:
  - name: shop
    secret: "c2VjcmV0"
    auth_tokn: 0123456789abcdef0123
    test: maybe
`, "IDVAULT_FAKEAUTH_ENABLED=true", "IDVAULT_IDENTITY_SERVER_TOKEN=x", "IDVAULT_MAILDEV_DIR=/tmp/m", "IDVAULT_FAKEAUTH__MAX_EMAILS=5")
	msg := l.Err().Error()
	require.Contains(t, msg, "fakeauth.enabled: environment variable IDVAULT_FAKEAUTH_ENABLED is not read: write IDVAULT_FAKEAUTH__ENABLED")
	require.Contains(t, msg, "identity_server.token: environment variable IDVAULT_IDENTITY_SERVER_TOKEN is not read: write IDVAULT_IDENTITY_SERVER__TOKEN")
	require.NotContains(t, msg, "MAILDEV", "variables naming no key are not idvault's business")
	require.Contains(t, msg, "apps[0].auth_tokn: unknown key")
	require.Contains(t, msg, "apps[0].test: want true or false")
	require.NotContains(t, msg, "0123456789abcdef0123")
	require.Equal(t, 5, l.Config.FakeAuth.MaxEmails)
}

// Every duration is bounded: a huge lock would wrap around when added to now.
func TestDurationsAreBounded(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal+`verification:
  lock_duration: 2500000h
  code_ttl: 0s
  address_send_window: 9000h
server:
  read_timeout: 100000h
store:
  lock_timeout: 2h
exit:
  shutdown_timeout: 100000h
`)
	msg := l.Err().Error()
	for _, key := range []string{"verification.lock_duration: must be between 1s and 8784h", "verification.code_ttl", "verification.address_send_window",
		"server.read_timeout: must be between 1ms and 24h", "store.lock_timeout", "exit.shutdown_timeout: must be between 1ms and 24h"} {
		require.Contains(t, msg, key)
	}
	require.NoError(t, loadFile(t, minimal+"verification:\n  lock_duration: 8000h\n").Err())
}

// Type errors name the full key and the expected type, never the value nor decoder internals.
func TestTypeErrorsNameKeyAndType(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal+`server:
  read_timeout: soon
  body_limit: big
  trusted_proxies: {a: 1}
fakeauth:
  enabled: perhaps
verification:
  ip_rate: fast
`, "IDVAULT_MAIL__PORT=secret-looking-value")
	msg := l.Err().Error()
	for _, want := range []string{
		"server.read_timeout: want a duration such as 10s",
		"server.body_limit: want a whole number",
		"server.trusted_proxies: want a list of strings",
		"fakeauth.enabled: want true or false",
		"verification.ip_rate: want a number",
		"mail.port: want a whole number",
	} {
		require.Contains(t, msg, want)
	}
	for _, leak := range []string{"secret-looking-value", "soon", "perhaps", "mapstructure", "decoding", "expected type"} {
		require.NotContains(t, msg, leak)
	}
}

func TestListenAddressIsChecked(t *testing.T) {
	t.Parallel()
	for listen, ok := range map[string]bool{
		"127.0.0.1:99999": false, "127.0.0.1:-1": false, "127.0.0.1:http": false, "bad host!:80": false,
		"127.0.0.1:8080": true, ":8080": true, "0.0.0.0:0": true, "[::1]:443": true, "localhost:8080": true,
	} {
		l := loadFile(t, minimal+"server:\n  listen: \""+listen+"\"\nfakeauth:\n  allow_remote: true\n")
		if ok {
			require.NoError(t, l.Err(), listen)
		} else {
			require.ErrorContains(t, l.Err(), "server.listen", listen)
		}
	}
}

// A YAML error is reported on the line where it is.
func TestYAMLErrorLine(t *testing.T) {
	t.Parallel()
	for body, line := range map[string]string{
		"log:\n  level: [unclosed\n":                "line 2:",
		"log:\n  level: info\n bad: 1\n":            "line 3:",
		"server:\n\tlisten: x\n":                    "line 2:",
		"server:\n  listen: a: b\n":                 "line 2:",
		"a: 1\nlog:\n  level: info\n  format: {x\n": "line 4:",
	} {
		file := filepath.Join(t.TempDir(), "c.yaml")
		require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
		_, err := Load(Sources{File: file})
		require.ErrorContains(t, err, line, "%q", body)
	}
}

// The YAML library's own quoted punctuation stays in the error: an unclosed list or map says
// which characters were expected, not "',(a value, not shown)]'".
func TestYAMLErrorKeepsExpectedCharacters(t *testing.T) {
	t.Parallel()
	for body, what := range map[string]string{
		"server:\n  listen: [\nfoo: 1\n":     "did not find expected ',' or ']'",
		"server:\n  listen: {a: 1\nfoo: 1\n": "did not find expected ',' or '}'",
	} {
		file := filepath.Join(t.TempDir(), "c.yaml")
		require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
		_, err := Load(Sources{File: file})
		require.ErrorContains(t, err, what, "%q", body)
		require.NotContains(t, err.Error(), "not shown", "%q", body)
	}
}

// The record cache is bounded by store.record_cache_mib: 32 MiB by default, 0 turns it off, a
// negative or absurd size is refused.
func TestRecordCacheSize(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal)
	require.NoError(t, l.Err())
	require.Equal(t, 32, l.Config.Store.RecordCacheMiB)
	off := loadFile(t, minimal+"store:\n  record_cache_mib: 0\n")
	require.NoError(t, off.Err())
	require.Equal(t, 0, off.Config.Store.RecordCacheMiB)
	for _, v := range []string{"-1", "100000"} {
		err := loadFile(t, minimal+"store:\n  record_cache_mib: "+v+"\n").Err()
		require.ErrorContains(t, err, "store.record_cache_mib: must be between 0 (off) and 65536")
	}
}

// An app declared twice (the same secret: serve refuses it at start) and two names equal but
// for case (app create refuses them) are reported by Validate, so config check finds them
// before serve does. The secret is never in the problem.
func TestDeclaredAppsAreDistinct(t *testing.T) {
	t.Parallel()
	const secret = "cTMoGGUKhwN47ypq4xAXAtVkNWeyUtMltQnYwJhxWYSvqjPVGmXd2wwa7y17QtPTZhn8bxb015CZC/e4ZI7+MQ=="
	const other = "l9QcZoHteJQXJVdshsc2f4CBntL60vZxmdBjFS8WxymUXmIJOBz3wTYNfzQiX4AxxB1BU5zd4U1bKURsdyUyBA=="
	app := func(name, secret string) string {
		return "  - name: " + name + "\n    secret: " + secret + "\n    auth_token: declared-token-0123456789\n"
	}
	err := loadFile(t, minimal+"apps:\n"+app("one", secret)+app("two", secret)+app("ONE", other)).Err()
	require.ErrorContains(t, err, "apps[1].secret: is the secret of apps[0]: the same app declared twice")
	require.ErrorContains(t, err, `apps[2].name: "ONE" is the name of apps[0]`)
	require.NotContains(t, err.Error(), secret[:20])
	require.NoError(t, loadFile(t, minimal+"apps:\n"+app("one", secret)+app("two", other)).Err())
}

// A declared app's name follows the rule app create applies (app/appname: 1 to 100 printable
// characters): a name that prints as nothing, moves the text around or drives a terminal
// would reach `app list`, the console and the admin API as a second "Shop". The problem names
// the key and shows the name with what does not print escaped. A name with a space at either
// end is refused too: app create trims names, so " Shop" would pass for another app's "Shop".
func TestDeclaredAppNamesArePrintable(t *testing.T) {
	t.Parallel()
	declare := func(names ...string) string {
		body := minimal + "apps:\n"
		for i, name := range names {
			secret := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{byte(i + 1)}, 64))
			body += "  - name: " + name + "\n    secret: " + secret + "\n    auth_token: declared-token-0123456789\n"
		}
		return body
	}
	const rule = "apps[0].name: must be 1 to 100 printable characters (no control, format, zero-width or direction-changing character), got "
	for name, c := range map[string]struct{ yaml, problem string }{
		"zero-width space":       {`"Sh\u200bop"`, rule + `"Sh\u200bop"`},
		"C1 CSI":                 {`"x\u009b31mred"`, rule + `"x\u009b31mred"`},
		"right-to-left override": {`"\u202egnp.exe"`, rule + `"\u202egnp.exe"`},
		"line separator":         {`"a\u2028b"`, rule + `"a\u2028b"`},
		"another space":          {`"a\u00a0b"`, rule + `"a\u00a0b"`},
		"tab":                    {`"tab\there"`, rule + `"tab\there"`},
		"newline":                {`"two\nlines"`, rule + `"two\nlines"`},
		"101 characters":         {strings.Repeat("é", 101), rule + "101 characters"},
		"a space at the start":   {`" Shop"`, `apps[0].name: must not begin or end with a space, got " Shop"`},
		"a space at the end":     {`"Shop "`, `apps[0].name: must not begin or end with a space, got "Shop "`},
		"empty":                  {`""`, `apps[0].name: must not be empty`},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			err := loadFile(t, declare(c.yaml)).Err()
			require.Error(t, err)
			require.Equal(t, c.problem, err.Error(), "one problem, naming the key")
		})
	}
	// The second app is named: the key says which entry is wrong.
	require.ErrorContains(t, loadFile(t, declare("shop", `"Sh\u200bop"`)).Err(), `apps[1].name: must be 1 to 100 printable characters`)
	// Printable names pass, up to 100 characters counted as characters (200 bytes here).
	require.NoError(t, loadFile(t, declare("Shop", `"My shop (staging) — été"`, strings.Repeat("é", 100))).Err())
}

// The data file, the master key and the admin token file are three files: a token file that is
// the key file would hand the master key to every admin client as the admin token.
func TestOneFileInTwoRolesIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	key := filepath.Join(dir, "master.key")
	require.NoError(t, os.WriteFile(key, []byte("k\n"), 0o600))
	link := filepath.Join(dir, "token-link")
	require.NoError(t, os.Symlink(key, link))
	data := "IDVAULT_STORE__PATH=" + filepath.Join(dir, "idvault.db")
	for name, env := range map[string][]string{
		"token file is the key file":        {data, "IDVAULT_ADMIN__TOKEN_FILE=" + key},
		"token file links to the key file":  {data, "IDVAULT_ADMIN__TOKEN_FILE=" + link},
		"key file is the data file":         {data, "IDVAULT_STORE__KEY_FILE=" + filepath.Join(dir, "idvault.db")},
		"relative and absolute of one path": {data, "IDVAULT_ADMIN__TOKEN_FILE=" + filepath.Join(dir, ".", "master.key")},
	} {
		err := loadFile(t, minimal, env...).Err()
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "each needs its own file", name)
	}
	// With admin.token set the token file is not read: no conflict.
	require.NoError(t, loadFile(t, minimal, data, "IDVAULT_ADMIN__TOKEN_FILE="+key, "IDVAULT_ADMIN__TOKEN=0123456789abcdef0123").Err())
	require.NoError(t, loadFile(t, minimal, data).Err(), "the defaults are three files")
}

// Declared apps cannot be spelt in the environment: IDVAULT_APPS__0__NAME made an app whose name
// was empty (the value lost), and IDVAULT_APPS was told to be written as itself. Both are
// reported as not read, and no app appears.
func TestAppsFromTheEnvironmentAreReported(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal, "IDVAULT_APPS__0__NAME=x", "IDVAULT_APPS=y")
	err := l.Err()
	require.ErrorContains(t, err, "apps: environment variable IDVAULT_APPS__0__NAME is not read: declare apps in the --config file")
	require.ErrorContains(t, err, "apps: environment variable IDVAULT_APPS is not read: declare apps in the --config file")
	require.NotContains(t, err.Error(), "write IDVAULT_APPS")
	require.NotContains(t, err.Error(), "apps[0]")
	require.Empty(t, l.Config.Apps)
}

// verification.ip_rate is a positive finite number: NaN passed the "positive" check and +Inf
// refilled the bucket at once, both lifting the per-client limit without a word.
func TestIPRateIsFinite(t *testing.T) {
	t.Parallel()
	for _, rate := range []string{"NaN", "Inf", "+Inf", "-Inf", "0", "-1"} {
		err := loadFile(t, minimal, "IDVAULT_VERIFICATION__IP_RATE="+rate).Err()
		require.ErrorContains(t, err, "verification.ip_rate: ip_rate must be a positive finite number", rate)
	}
	require.NoError(t, loadFile(t, minimal, "IDVAULT_VERIFICATION__IP_RATE=0.5").Err())
}

// server.body_limit has a ceiling as well as a floor: a body is held in memory whole, so a limit
// of gigabytes (99999999999 started before) would let each connection hold one.
func TestBodyLimitIsBounded(t *testing.T) {
	t.Parallel()
	for _, limit := range []string{"99999999999", "16777217", "1023"} {
		err := loadFile(t, minimal, "IDVAULT_SERVER__BODY_LIMIT="+limit).Err()
		require.ErrorContains(t, err, "server.body_limit: must be at", limit)
	}
	for _, limit := range []string{"1024", "16777216"} {
		require.NoError(t, loadFile(t, minimal, "IDVAULT_SERVER__BODY_LIMIT="+limit).Err(), limit)
	}
}

// A mapping written where a secret string belongs is reported as a type problem, and its
// values stay hidden: they sit under the secret's key (admin.token.a), which is known by prefix.
func TestRedactedHidesMappingsUnderSecretKeys(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal+"admin:\n  token:\n    a: file-secret-4\nexit:\n  db:\n    - postgres://u:file-secret-5@h/x\n",
		"IDVAULT_MAIL__PASSWORD__X=env-secret-6")
	out := strings.Join(l.Redacted(), "\n")
	for _, s := range []string{"file-secret-4", "file-secret-5", "env-secret-6"} {
		require.NotContains(t, out, s)
		require.NotContains(t, l.Err().Error(), s)
	}
	require.Contains(t, out, "admin.token.a = <redacted>")
	require.Contains(t, out, "mail.password.x = <redacted>")
	require.Contains(t, l.Err().Error(), "admin.token: want a string")
}

// An issuer or CORS origin written with credentials (http://user:password@host) is refused,
// and neither config check nor the problem shows the password.
func TestURLCredentialsNeverPrinted(t *testing.T) {
	t.Parallel()
	l := loadFile(t, minimal+`identity_server:
  enabled: true
  app_id: "5F6GmjyatFXPvQ8dKp2iDIqj75q/QSN+f284erSiw2E="
  oidc:
    issuer: "http://u:issuer-secret-7@127.0.0.1:1/"
    audience: aud
  cors_origins: ["https://u:origin-secret-8@app.example.com"]
`)
	out := strings.Join(l.Redacted(), "\n")
	msg := l.Err().Error()
	for _, s := range []string{"issuer-secret-7", "origin-secret-8"} {
		require.NotContains(t, out, s)
		require.NotContains(t, msg, s)
	}
	require.Contains(t, out, "identity_server.oidc.issuer = http://<redacted>@127.0.0.1:1/")
	require.Contains(t, msg, `identity_server.oidc.issuer: "http://<redacted>@127.0.0.1:1/" is not an issuer URL`)
	require.Contains(t, msg, `"https://<redacted>@app.example.com" is not an origin`)
}

// A secret the YAML library cannot read (a password starting with '*' is an alias, one with a
// tag is decoded as that type) fails the load without the error quoting it; the line stays.
func TestYAMLErrorHidesValues(t *testing.T) {
	t.Parallel()
	for body, what := range map[string]string{
		"mail:\n  password: *yaml-secret-1\n":          "line 2: yaml: unknown anchor (a value, not shown) referenced",
		"admin:\n  token: !!int yaml-secret-2\n":       "line 2: yaml: cannot decode !!str (a value, not shown) as a !!int",
		"admin:\n  ? [yaml-secret-3]\n  : x\n":         "line 2: yaml: invalid map key (not shown)",
		"mail:\n  password: !!bool yaml-secret-4\n":    "as a !!bool",
		"mail:\n  host: h\n  password yaml-secret-5\n": "line 3: could not find expected ':'",
	} {
		file := filepath.Join(t.TempDir(), "c.yaml")
		require.NoError(t, os.WriteFile(file, []byte(body), 0o600))
		_, err := Load(Sources{File: file})
		require.ErrorContains(t, err, what, "%q", body)
		require.NotContains(t, err.Error(), "yaml-secret", "%q", body)
	}
}
