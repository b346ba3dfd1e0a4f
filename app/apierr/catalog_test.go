package apierr

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Every code of the catalogues (idvault serve's and the exit server's) is an error status, has
// a message, and is documented in the README's API reference.
// The exit catalogue's messages are the exit server's own: its OpenAPI document lists them as
// the default messages, so none may name a key of idvault serve's configuration (server.*).
func TestExitCatalogNamesExitKeys(t *testing.T) {
	t.Parallel()
	for _, c := range ExitCatalog {
		require.NotContains(t, c.Message, "server.", "exit catalogue code %s", c.Name)
	}
}

func TestCatalogIsCompleteAndDocumented(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	seen := map[string]int{}
	for _, c := range append(slices.Clone(Catalog), ExitCatalog...) {
		require.GreaterOrEqual(t, c.Status, 400, c.Name)
		require.Less(t, c.Status, 600, c.Name)
		require.NotEmpty(t, c.Message, c.Name)
		require.Equal(t, strings.ToLower(c.Name), c.Name)
		if prev, ok := seen[c.Name]; ok {
			require.Equal(t, prev, c.Status, "code %s has one status everywhere", c.Name)
		}
		seen[c.Name] = c.Status
		if c.Name == "no_email_provided" || c.Name == "unknown_user" || c.Name == "unauthorized" {
			require.Contains(t, string(readme), c.Message, "identity-server message %q documented", c.Message)
			continue
		}
		require.Contains(t, string(readme), "`"+c.Name+"`", "code %s documented in README.md", c.Name)
	}
}
