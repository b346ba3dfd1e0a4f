package apptest

import (
	"os/exec"
	"testing"

	"github.com/idvault/idvault/app/apptest/external"
)

// Command returns the path of the command name on $PATH, which Debian's package pkg provides
// (`make deps` installs it: .ci/install-debian-tools). Without it the test ends through
// external.Missing: a skip, or a failure under IDVAULT_REQUIRE_EXTERNAL=1.
func Command(tb testing.TB, name, pkg string) string {
	tb.Helper()
	external.Short(tb, name)
	path, err := exec.LookPath(name)
	if err != nil {
		external.Missing(tb, name+" is not installed (Debian package "+pkg+"; make deps installs it: .ci/install-debian-tools)")
	}
	return path
}
