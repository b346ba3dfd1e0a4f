package external

import (
	"os"
	"testing"
)

// EnvRequire=1 (as `make test` sets it, after `make deps`) turns a missing external tool into a
// test failure instead of a skip.
const EnvRequire = "IDVAULT_REQUIRE_EXTERNAL"

// Missing ends a test that needs an external tool which is not there: it skips the test, or
// fails it under IDVAULT_REQUIRE_EXTERNAL=1. msg names the tool and how to install it.
func Missing(tb testing.TB, msg string) {
	tb.Helper()
	if os.Getenv(EnvRequire) == "1" {
		tb.Fatal(msg + " (" + EnvRequire + "=1)")
	}
	tb.Skip(msg)
}
