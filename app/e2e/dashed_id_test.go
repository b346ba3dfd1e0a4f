package e2e_test

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/identity"
)

// An app ID whose URL form begins with "-" (1 in 64) is an app ID, not an unknown flag, before
// or after the command's flags; a flag's value that looks like one stays that flag's value.
func TestAppIDBeginningWithADashIsAnArgument(t *testing.T) {
	t.Parallel()
	var (
		id  []byte
		err error
	)
	for i := 0; i < 10000 && !strings.HasPrefix(base64.URLEncoding.EncodeToString(id), "-"); i++ {
		id, _, err = identity.GenerateApp(rand.Reader)
		require.NoError(t, err)
	}
	urlID := base64.URLEncoding.EncodeToString(id)
	require.True(t, strings.HasPrefix(urlID, "-"), "no ID beginning with - in 10000 draws")
	dir, env := dataDirWithApp(t, id, "dashed")

	for _, args := range [][]string{
		{"app", "show", urlID},
		{"app", "show", "--json", urlID},
		{"app", "show", urlID, "--json"},
		{"app", "show", "--", urlID},
	} {
		out, errOut, code := apptest.RunCLI(t, dir, env, args...)
		require.Equal(t, 0, code, "%v: %s", args, errOut)
		require.Contains(t, out, "dashed", args)
	}
	// The value of --config: read as a path, not taken as the app ID.
	_, errOut, code := apptest.RunCLI(t, dir, env, "app", "show", "--config", urlID, urlID)
	require.NotEqual(t, 0, code)
	require.Contains(t, errOut, urlID, "the config path named")
}
