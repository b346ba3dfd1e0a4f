package cli_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
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
