package cli_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"idvault/exit/pgtest"
)

func TestExitHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{{"exit", "--help"}, {"exit", "gen-dump", "--help"}, {"exit", "load-dump", "--help"}} {
		out, errOut, code := run(t, dir, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Contains(t, out, "Usage", "%v", args)
	}
	out, _, _ := run(t, dir, "exit", "--help")
	require.Contains(t, out, "gen-dump")
	require.Contains(t, out, "load-dump")
	_, errOut, code := run(t, dir, "exit", "frobnicate")
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
		{[]string{"exit", "load-dump", dir}, "--db DSN and one dump directory"},
	} {
		_, errOut, code := run(t, dir, tc.args...)
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
	out, errOut, code := run(t, t.TempDir(), "exit", "gen-dump", "--out", dir, "--users", "5", "--groups", "2",
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
	_, errOut, code = run(t, t.TempDir(), "exit", "gen-dump", "--out", dir2, "--users", "2", "--resources", "3", "--app-secret", app.AppSecret, "--seed", "9")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "app ID "+app.AppID)
	_, err = base64.StdEncoding.DecodeString(app.AppSecret)
	require.NoError(t, err)

	out, errOut, code = run(t, t.TempDir(), "exit", "load-dump", "--db", dsn, dir)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, "loaded: 3 files")

	// A second load is refused and says why.
	_, errOut, code = run(t, t.TempDir(), "exit", "load-dump", dir, "--db", dsn)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "1_schema.sql line")
	require.Contains(t, errOut, "already exists")
}
