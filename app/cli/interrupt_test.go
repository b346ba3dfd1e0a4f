package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A command whose context is cancelled (Ctrl-C, SIGTERM) says "interrupted", never Go's
// "context canceled", and fails: exit 1, or 130 (128 + SIGINT) for the exit tool's bulk
// clients, whose scripts tell an interrupted run from failed files.
func TestInterruptedCommandsSayInterrupted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ids := filepath.Join(dir, "ids.json")
	require.NoError(t, os.WriteFile(ids, []byte(`["eyJhIjoxfQ=="]`), 0o600))
	in := filepath.Join(dir, "in")
	require.NoError(t, os.MkdirAll(in, 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(in, "a.bin"), []byte("x"), 0o600))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"exit", "gen-dump", "--out", filepath.Join(dir, "dump"), "--users", "1000"}, exitFail, "idvault exit gen-dump: interrupted\n"},
		{[]string{"exit", "import", "--url", "http://127.0.0.1:1", ids}, exitInterrupted, "idvault exit import: interrupted: 0 of 1 identities handled"},
		{[]string{"exit", "decrypt", "--url", "http://127.0.0.1:1", "--in", in, "--out", filepath.Join(dir, "out")}, exitInterrupted, "idvault exit decrypt: interrupted"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errb bytes.Buffer
		code := Run(ctx, tc.args, &out, &errb, Env{Environ: []string{"IDVAULT_STORE__PATH=" + filepath.Join(dir, "none.db")}})
		require.Equal(t, tc.code, code, "%v: %s", tc.args, errb.String())
		require.Contains(t, errb.String(), tc.want, "%v", tc.args)
		require.NotContains(t, errb.String(), "context canceled", "%v", tc.args)
	}
}
