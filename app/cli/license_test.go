package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
)

// The project is licensed (Apache-2.0, full text at the top level) and the README says so.
func TestLicenseIsApache2AndNamedInReadme(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	require.NoError(t, err, "LICENSE at the top level")
	text := string(raw)
	require.Contains(t, text, "Apache License\n                           Version 2.0, January 2004")
	require.Contains(t, text, "END OF TERMS AND CONDITIONS")
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), "Apache License, Version 2.0: the full text is in [LICENSE](LICENSE)")
}

// THIRD_PARTY_NOTICES is what .ci/notices prints now: every module compiled into the binary on
// a release platform, at the version go.mod asks for, with its license files. A dependency
// added or upgraded without `make notices` fails here.
func TestThirdPartyNoticesAreCurrent(t *testing.T) {
	external.Short(t, ".ci/notices")
	t.Parallel()
	want, err := exec.Command(filepath.Join("..", "..", ".ci", "notices")).Output()
	require.NoError(t, err, "run .ci/notices")
	got, err := os.ReadFile("THIRD_PARTY_NOTICES")
	require.NoError(t, err)
	require.True(t, string(want) == string(got), "THIRD_PARTY_NOTICES is stale: run make notices")
}
