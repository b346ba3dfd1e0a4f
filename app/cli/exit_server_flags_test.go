package cli_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A --retry-budget that is not positive is refused while the flags are parsed, with the same
// usage message for every exit client command, before anything is read or asked of a server.
func TestRetryBudgetMustBePositive(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	commands := map[string][]string{
		"audit":           {"exit", "audit", "--in", dir},
		"decrypt":         {"exit", "decrypt", "--in", dir, "--out", filepath.Join(dir, "out")},
		"import":          {"exit", "import", filepath.Join(dir, "identities.jsonl")},
		"decrypt-records": {"exit", "decrypt-records", "--in", filepath.Join(dir, "r.csv"), "--out", filepath.Join(dir, "o.csv"), "--field", "a"},
	}
	t.Cleanup(func() { // after the parallel subtests
		require.NoDirExists(t, filepath.Join(dir, "out"), "decrypt made its output with a bad budget")
	})
	for name, args := range commands {
		for _, budget := range []string{"0s", "-1m"} {
			t.Run(name+" "+budget, func(t *testing.T) {
				t.Parallel()
				args := append(args[:len(args):len(args)], "--url", "http://127.0.0.1:1", "--retry-budget", budget)
				out, errOut, code := runExit(context.Background(), t, nil, nil, nil, args...)
				require.Equal(t, 2, code, errOut)
				require.Empty(t, out)
				require.Contains(t, errOut, fmt.Sprintf("idvault exit %s: invalid value %q for flag --retry-budget: must be a positive duration\nUsage: idvault exit %s ", name, budget, name))
			})
		}
	}
}
