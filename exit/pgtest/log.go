package pgtest

import (
	"os"
	"path/filepath"
	"testing"
)

// ServerLog returns what the test cluster's server has written to its log so far (the log of
// every database of this test binary), for tests that check what reaches it.
func ServerLog(tb testing.TB) string {
	tb.Helper()
	c := get(tb)
	raw, err := os.ReadFile(filepath.Join(c.dir, "server.log"))
	if err != nil {
		tb.Fatalf("pgtest: read the server log: %v", err)
	}
	return string(raw)
}
