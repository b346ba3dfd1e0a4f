package cli_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/exit/pgtest"
)

func TestExitHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"exit", "--help"}, {"exit", "gen-dump", "--help"}, {"exit", "load-dump", "--help"}} {
		out, errOut, code := clitest.Run(t, dir, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Contains(t, out, "Usage", "%v", args)
	}
	out, _, _ := clitest.Run(t, dir, "exit", "--help")
	require.Contains(t, out, "gen-dump")
	require.Contains(t, out, "load-dump")
	_, errOut, code := clitest.Run(t, dir, "exit", "frobnicate")
	require.Equal(t, 2, code)
	require.Contains(t, errOut, `unknown subcommand "frobnicate"`)
}

func TestGenDumpRejectsBadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"exit", "gen-dump"}, "--out is required"},
		{[]string{"exit", "gen-dump", "--out", dir, "--formats", "1"}, "format 1 cannot be generated"},
		{[]string{"exit", "gen-dump", "--out", dir, "--formats", "9-x"}, "not a range"},
		{[]string{"exit", "gen-dump", "--out", dir, "--app-secret", "c2hvcnQ="}, "64-byte app secret"},
		{[]string{"exit", "load-dump", dir}, "--db DSN (or IDVAULT_EXIT__DB) and one dump directory"},
	} {
		_, errOut, code := clitest.Run(t, dir, tc.args...)
		require.Equal(t, 2, code, "%v", tc.args)
		require.Contains(t, errOut, tc.want, "%v", tc.args)
	}
}

// TestGenDumpThenLoadDump runs both commands as a user would: the summary line (no bar, as
// the output is not a terminal), the files, then the load into a real PostgreSQL.
func TestGenDumpThenLoadDump(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDB(t)
	dir := filepath.Join(t.TempDir(), "dump")
	out, errOut, code := clitest.Run(t, t.TempDir(), "exit", "gen-dump", "--out", dir, "--users", "5", "--groups", "2",
		"--resources", "12", "--formats", "2,9-11", "--decoy-apps", "1", "--seed", "42")
	require.Equal(t, 0, code, errOut)
	require.Empty(t, out)
	require.Equal(t, 1, strings.Count(errOut, "\n"), "one summary line: %q", errOut)
	require.Contains(t, errOut, "dump written to "+dir)
	for _, f := range []string{"1_schema.sql", "2_data.sql", "3_indexes.sql", "app.json", "identities.jsonl", "manifest.jsonl"} {
		_, err := os.Stat(filepath.Join(dir, f))
		require.NoError(t, err, f)
	}
	var app struct {
		AppID     string `json:"app_id"`
		AppSecret string `json:"app_secret"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "app.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &app))

	// --app-secret: the same secret gives the same app ID.
	dir2 := filepath.Join(t.TempDir(), "dump")
	_, errOut, code = clitest.Run(t, t.TempDir(), "exit", "gen-dump", "--out", dir2, "--users", "2", "--resources", "3", "--app-secret", app.AppSecret, "--seed", "9")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "app ID "+app.AppID)
	_, err = base64.StdEncoding.DecodeString(app.AppSecret)
	require.NoError(t, err)

	// The DSN from IDVAULT_EXIT__DB, which keeps a password out of the process list.
	e := clitest.Env(t.TempDir())
	e.Environ = append(e.Environ, "IDVAULT_EXIT__DB="+dsn)
	_, errOut, code = clitest.RunWith(context.Background(), t, e, "exit", "load-dump", dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "loaded: 3 files")

	// A second load is refused and says why.
	_, errOut, code = clitest.Run(t, t.TempDir(), "exit", "load-dump", dir, "--db", dsn)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "1_schema.sql line")
	require.Contains(t, errOut, "already exists")
}

// The app secret comes from the flag, a file or IDVAULT_APP_SECRET, each giving the same app;
// conflicting or bad sources are refused without quoting the secret. The secret files of the
// dump are the owner's only.
func TestGenDumpAppSecretSources(t *testing.T) {
	t.Parallel()
	secret := base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)))
	secretFile := filepath.Join(t.TempDir(), "secret")
	require.NoError(t, os.WriteFile(secretFile, []byte(secret+"\n"), 0o600))
	small := []string{"--users", "2", "--resources", "2", "--seed", "5"}
	appID := func(extra []string, args ...string) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), "dump")
		_, errOut, code := clitest.RunEnv(t, extra, append(append([]string{"exit", "gen-dump", "--out", dir}, small...), args...)...)
		require.Equal(t, 0, code, errOut)
		require.NotContains(t, errOut, secret)
		for _, f := range []string{"app.json", "identities.jsonl", "2_data.sql", "manifest.jsonl", "SHA256SUMS"} {
			st, err := os.Stat(filepath.Join(dir, f))
			require.NoError(t, err)
			require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), f)
		}
		raw, err := os.ReadFile(filepath.Join(dir, "app.json"))
		require.NoError(t, err)
		var app struct {
			AppID     string `json:"app_id"`
			AppSecret string `json:"app_secret"`
		}
		require.NoError(t, json.Unmarshal(raw, &app))
		if len(args)+len(extra) > 0 {
			require.Equal(t, secret, app.AppSecret)
		}
		return app.AppID
	}
	fromFlag := appID(nil, "--app-secret", secret)
	require.Equal(t, fromFlag, appID(nil, "--app-secret-file", secretFile))
	require.Equal(t, fromFlag, appID([]string{"IDVAULT_APP_SECRET=" + secret}))
	require.Equal(t, fromFlag, appID([]string{"IDVAULT_APP_SECRET=" + secret, "IDVAULT_APP_SECRET="}),
		"an empty setting means unset: the last non-empty one counts")
	require.Equal(t, fromFlag, appID([]string{"IDVAULT_APP_SECRET=" + base64.StdEncoding.EncodeToString(ed25519.NewKeyFromSeed(make([]byte, 32)))}, "--app-secret-file", secretFile),
		"a flag wins over the environment")
	require.NotEqual(t, fromFlag, appID(nil), "without a secret it comes from the seed")

	badFile := filepath.Join(t.TempDir(), "bad")
	require.NoError(t, os.WriteFile(badFile, []byte("not-base64-"+secret[:20]), 0o600))
	for _, tc := range []struct {
		extra []string
		args  []string
		want  string
	}{
		{nil, []string{"--app-secret", secret, "--app-secret-file", secretFile}, "not both"},
		{nil, []string{"--app-secret-file", badFile}, "--app-secret-file must be the base64 of a 64-byte app secret"},
		{nil, []string{"--app-secret-file", filepath.Join(t.TempDir(), "absent")}, "--app-secret-file:"},
		{[]string{"IDVAULT_APP_SECRET=" + secret[:20]}, nil, "IDVAULT_APP_SECRET must be the base64 of a 64-byte app secret"},
	} {
		dir := filepath.Join(t.TempDir(), "dump")
		_, errOut, code := clitest.RunEnv(t, tc.extra, append(append([]string{"exit", "gen-dump", "--out", dir}, small...), tc.args...)...)
		require.Equal(t, 2, code, "%v %v", tc.extra, tc.args)
		require.Contains(t, errOut, tc.want)
		require.NotContains(t, errOut, secret[:20])
		_, err := os.Stat(dir)
		require.ErrorIs(t, err, os.ErrNotExist, "nothing written")
	}
}

// load-dump refuses a dump holding a statement that is not part of an exit dump: one message
// naming the file and line, exit 1, and nothing run or committed.
func TestLoadDumpRefusesAHostileDump(t *testing.T) {
	t.Parallel()
	dsn := pgtest.NewDB(t)
	dir := filepath.Join(t.TempDir(), "dump")
	_, errOut, code := clitest.Run(t, t.TempDir(), "exit", "gen-dump", "--out", dir, "--users", "2", "--resources", "2")
	require.Equal(t, 0, code, errOut)
	marker := filepath.Join(os.TempDir(), "idvault-load-dump-hostile-"+strconv.Itoa(os.Getpid()))
	t.Cleanup(func() { _ = os.Remove(marker) })
	path := filepath.Join(dir, "3_indexes.sql")
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	line := strings.Count(string(b), "\n") + 1
	require.NoError(t, os.WriteFile(path, append(b, "COPY (SELECT 1) TO PROGRAM 'touch "+marker+"';\n"...), 0o600))

	_, errOut, code = clitest.Run(t, t.TempDir(), "exit", "load-dump", "--db", dsn, dir)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "3_indexes.sql line "+strconv.Itoa(line)+": statement refused: COPY of a query")
	require.Contains(t, errOut, "nothing was run")
	require.NotContains(t, errOut, "already committed")
	_, err = os.Stat(marker)
	require.ErrorIs(t, err, os.ErrNotExist)
	tables, err := exec.Command(pgtest.Bin(t, "psql"), "-X", "-tA", dsn, "-c",
		"SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").Output()
	require.NoError(t, err)
	require.Equal(t, "0", strings.TrimSpace(string(tables)), "the database is untouched")
}
