package pgtest

import (
	"os"
	"path/filepath"
	"testing"
)

// ServerLog returns what the test cluster's server has logged so far (its standard error:
// errors with their CONTEXT and STATEMENT lines), for tests that check what PostgreSQL keeps
// of their data. A Start after Stop begins the log anew.
func ServerLog(tb testing.TB) string {
	tb.Helper()
	c := get(tb)
	raw, err := os.ReadFile(filepath.Join(c.dir, "server.log"))
	if err != nil {
		tb.Fatalf("pgtest: read the server log: %v", err)
	}
	return string(raw)
}
