package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/cli"
	"github.com/idvault/idvault/app/config"
)

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, errOut, code := clitest.Run(t, t.TempDir(), args...)
		require.Equal(t, 0, code, errOut)
		require.Contains(t, out, "idvault v1.2.3-test\n", args)
		require.Contains(t, out, "commit: abc123\n", args)
		require.Contains(t, out, "go:     go1.26.8 ", args)
	}

	var b bytes.Buffer
	require.Equal(t, 0, cli.Run(context.Background(), []string{"version"}, &b, &b, cli.Env{}))
	require.Contains(t, b.String(), "idvault devel\n", "builds from no release tag say so")
	require.Contains(t, b.String(), "commit: unknown\n")
}

// ReadBuild takes a stamped release tag, else a release version Go recorded, else "devel".
func TestReadBuild(t *testing.T) {
	t.Parallel()
	require.Equal(t, "v2.0.1", cli.ReadBuild("v2.0.1", "").Version)
	b := cli.ReadBuild("", "")
	require.Equal(t, "devel", b.Version, "a test binary has no release version")
	require.Equal(t, runtime.Version(), b.GoVersion)
	require.Equal(t, "unknown", b.Revision, "a test binary records no commit")
	require.Equal(t, "0123abc", cli.ReadBuild("", "0123abc").Revision)
}

func TestAppCommandsOnTheDataFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	out, errOut, code := clitest.Run(t, dir, "app", "create", "--name", "shop", "--test", "--json")
	require.Equal(t, 0, code, errOut)
	var c clitest.Created
	require.NoError(t, json.Unmarshal([]byte(out), &c))
	require.True(t, c.App.Test)
	require.Len(t, c.AppSecret, 88, "64-byte secret in base64")
	require.GreaterOrEqual(t, len(c.AuthToken), 43, "at least 32 random bytes")

	for _, args := range [][]string{{"app", "list"}, {"app", "list", "--json"}, {"app", "show", c.App.ID}, {"app", "show", "--json", c.App.ID}} {
		out, errOut, code := clitest.Run(t, dir, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Contains(t, out, c.App.ID)
		require.NotContains(t, out, c.AppSecret, "%v shows the secret", args)
		require.NotContains(t, out, c.AuthToken, "%v shows the token", args)
	}

	out, _, code = clitest.Run(t, dir, "app", "rotate-token", c.App.ID, "--json")
	require.Equal(t, 0, code)
	var rot struct {
		AuthToken string `json:"auth_token"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &rot))
	require.NotEmpty(t, rot.AuthToken)
	require.NotEqual(t, c.AuthToken, rot.AuthToken)

	_, _, code = clitest.Run(t, dir, "app", "delete", c.App.ID)
	require.Equal(t, 0, code)
	_, errOut, code = clitest.Run(t, dir, "app", "show", c.App.ID)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "no app with that ID")
	_, errOut, code = clitest.Run(t, dir, "app", "show", "not-an-id")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not an app ID")
	_, errOut, code = clitest.Run(t, dir, "app", "delete", c.AppSecret) // the secret pasted for the ID
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "not an app ID")
	require.NotContains(t, errOut, c.AppSecret, "an argument that is not an app ID is not quoted")
	_, errOut, code = clitest.Run(t, dir, "app", "create")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, "--name is required")
}

func TestHumanOutputOfCreateShowsSecretsOnce(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	out, _, code := clitest.Run(t, dir, "app", "create", "--name", "human")
	require.Equal(t, 0, code)
	require.Contains(t, out, "app secret:")
	require.Contains(t, out, "auth token:")
	require.Contains(t, out, "shown only now")
}

func TestConfigCheck(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, _, code := clitest.Run(t, dir, "config", "check")
	require.Equal(t, 0, code)
	require.Contains(t, out, "configuration OK")
	require.Contains(t, out, "server.listen = 127.0.0.1:8080")
	require.Contains(t, out, "# profile: local-dev")

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("log:\n  level: loud\nmail:\n  host: smtp.example.com\n  from: a@example.com\n  port: -1\n  username: u\n  password: p4ssw0rd-secret\n"), 0o600))
	out, _, code = clitest.Run(t, dir, "config", "check", "--config", bad)
	require.Equal(t, 3, code)
	require.Contains(t, out, "# profile: file "+bad)
	require.Contains(t, out, "fakeauth.enabled = false")
	require.Contains(t, out, "mail.tls = mandatory")
	require.Contains(t, out, "problem: log.level")
	require.Contains(t, out, "problem: mail.port")
	require.Contains(t, out, "2 problem(s)")
	require.NotContains(t, out, "p4ssw0rd-secret")
	require.True(t, strings.Contains(out, "mail.password = <redacted>"))
}

// A --config, master key or admin token file pointed by mistake at something endless or huge is
// refused at once, named, rather than read until the machine's memory runs out.
func TestHugeFilesAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, errOut, code := clitest.Run(t, dir, "config", "check", "--config", "/dev/zero")
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "config: read /dev/zero: file too large")
	require.Equal(t, 1, strings.Count(errOut, "/dev/zero"), "the path is named once: %s", errOut)

	big := filepath.Join(dir, "big.yaml")
	require.NoError(t, os.WriteFile(big, append([]byte("log:\n  level: info\n# "), make([]byte, config.MaxFileSize)...), 0o600))
	_, errOut, code = clitest.Run(t, dir, "config", "check", "--config", big)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "over 4194304 bytes")

	clitest.InitData(t, dir)
	e := clitest.Env(dir)
	e.Environ = append(e.Environ, "IDVAULT_STORE__KEY_FILE=/dev/zero")
	_, errOut, code = clitest.RunWith(context.Background(), t, e, "backup", "--out", filepath.Join(dir, "b.db"))
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, "master key: read /dev/zero: file too large")
	require.Equal(t, 1, strings.Count(errOut, "/dev/zero"), "the path is named once: %s", errOut)
}

func TestServeRefusesBadConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("server:\n  listen: 0.0.0.0:0\nfakeauth:\n  enabled: true\nverification:\n  enabled: false\n"), 0o600))
	_, errOut, code := clitest.Run(t, dir, "serve", "--config", bad)
	require.Equal(t, 3, code)
	require.Contains(t, errOut, "fakeauth.enabled")
}

func TestBackupOfflineWritesAVerifiedCopy(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	clitest.InitData(t, dir)
	_, _, code := clitest.Run(t, dir, "app", "create", "--name", "a")
	require.Equal(t, 0, code)
	out := filepath.Join(dir, "backup.db")
	stdout, errOut, code := clitest.Run(t, dir, "backup", "--out", out)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, stdout, "backup written")
	// The copy is a working data file: the app is there when opened as the data file.
	list, _, code := clitest.Run(t, dir, "app", "list", "--data", out)
	require.Equal(t, 0, code)
	require.Contains(t, list, "a")
}

// `config check` never echoes a mistyped secret (an unknown key's value is never printed).
func TestConfigCheckHidesMistypedSecrets(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	code := cli.Run(context.Background(), []string{"config", "check"}, &out, &errb, cli.Env{
		Embedded: clitest.Embedded(t),
		Environ:  []string{"IDVAULT_MAIL__PASSWD=supersecret", "IDVAULT_FAKEAUTH_ENABLED=false"},
	})
	require.Equal(t, 3, code)
	require.NotContains(t, out.String()+errb.String(), "supersecret")
	require.Contains(t, out.String(), "problem: mail.passwd: unknown key")
	require.Contains(t, out.String(), "problem: fakeauth.enabled: environment variable IDVAULT_FAKEAUTH_ENABLED is not read")
}

// admin.token follows the master key's rule: readable by group or others, it is refused.
func TestAdminTokenFileReadableByOthersIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "admin.token")
	require.NoError(t, os.WriteFile(path, []byte("0123456789abcdef0123456789abcdef\n"), 0o644))
	require.NoError(t, os.Chmod(path, 0o644))
	_, errOut, code := clitest.Run(t, dir, "serve")
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "readable by group or others")
	require.Contains(t, errOut, "chmod 600")
	require.NotContains(t, errOut, "0123456789abcdef0123456789abcdef")
}

// admin.token follows admin.token's rule: an empty, short or two-line token file is refused by
// serve and the app commands with its path, instead of a server with a weak token, one no
// client can send, or (empty) a misleading "file exists".
func TestAdminTokenFileHoldsAUsableToken(t *testing.T) {
	t.Parallel()
	for name, content := range map[string]string{
		"empty":     "\n",
		"short":     "short-token\n",
		"two lines": "0123456789abcdef0123456789abcdef\nsecond-line\n",
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "admin.token")
		require.NoError(t, os.WriteFile(path, []byte(content), 0o600))
		// A server that starts anyway stops once ready, so the test fails rather than hangs.
		ctx, cancel := context.WithCancel(context.Background())
		e := clitest.Env(dir)
		e.Environ = append(e.Environ, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false")
		e.Ready = func(string) { cancel() }
		_, errOut, code := clitest.RunWith(ctx, t, e, "serve")
		cancel()
		require.Equal(t, 1, code, name)
		require.Contains(t, errOut, "admin token file "+path, name)
		require.NotContains(t, errOut, "file exists", name)
		require.NotContains(t, errOut, "short-token", name)
	}
}

// A flag given an empty value (an unset shell variable: --data "$DATA") is a usage error, not
// the flag left out: serve would otherwise start on another data file, or on the local-dev
// profile for --config, and app create would write no --identity-server-env file.
func TestEmptyFlagValuesAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"serve", "--data", ""}, {"serve", "--config="}, {"serve", "--listen", ""}, {"serve", "--log-level="},
		{"app", "list", "--data="}, {"config", "check", "--config", ""},
		{"backup", "--out", ""},
		{"init", "--dir", ""}, {"init", "--dir", filepath.Join(dir, "etc"), "--data", ""},
		{"app", "create", "--name", "x", "--identity-server-env", ""},
	} {
		// A server that starts anyway stops once ready, so the test fails rather than hangs.
		ctx, cancel := context.WithCancel(context.Background())
		e := clitest.Env(dir)
		e.Environ = append(e.Environ, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false")
		e.Ready = func(string) { cancel() }
		_, errOut, code := clitest.RunWith(ctx, t, e, args...)
		cancel()
		require.Equal(t, 2, code, "%q", args)
		require.Contains(t, errOut, "is given an empty value", "%q", args)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Empty(t, entries, "nothing created")
}
