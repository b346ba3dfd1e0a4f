package apptest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/idvault/idvault/app/apptest/external"
)

// AgeCommand returns the path of the `age` command (Debian's package `age`, installed by
// `make deps`; IDVAULT_AGE names another), so that tests open what idvault writes with the
// reference tool rather than with the library that wrote it. Without it the test is skipped,
// or fails when IDVAULT_REQUIRE_EXTERNAL=1.
func AgeCommand(t testing.TB) string {
	t.Helper()
	external.Short(t, "age")
	if p := os.Getenv("IDVAULT_AGE"); p != "" {
		return p
	}
	if p, err := exec.LookPath("age"); err == nil {
		return p
	}
	external.Missing(t, "the age command is missing: run make deps (apt-get install age) or set IDVAULT_AGE")
	return ""
}
