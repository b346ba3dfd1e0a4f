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
// "context canceled", and fails.
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
		want string
	}{
		{[]string{"exit", "gen-dump", "--out", filepath.Join(dir, "dump"), "--users", "1000"}, "idvault exit gen-dump: interrupted\n"},
		{[]string{"exit", "import", "--url", "http://127.0.0.1:1", ids}, "idvault exit import: interrupted after 0 of 1 identities"},
		{[]string{"exit", "decrypt", "--url", "http://127.0.0.1:1", "--in", in, "--out", filepath.Join(dir, "out")}, "idvault exit decrypt: interrupted\n"},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var out, errb bytes.Buffer
		code := Run(ctx, tc.args, &out, &errb, Env{Environ: []string{"IDVAULT_STORE__PATH=" + filepath.Join(dir, "none.db")}})
		require.Equal(t, exitFail, code, "%v: %s", tc.args, errb.String())
		require.Contains(t, errb.String(), tc.want, "%v", tc.args)
		require.NotContains(t, errb.String(), "context canceled", "%v", tc.args)
	}
}
