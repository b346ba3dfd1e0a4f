package e2e_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// A release binary is downloaded alone: `idvault license` prints the project's LICENSE, in
// full, then the third-party notices (the Go toolchain's license and every module's), so that
// the binary carries what the licenses of the code compiled into it ask a copy to carry.
func TestBinaryPrintsItsLicenseAndNotices(t *testing.T) {
	t.Parallel()
	license, err := os.ReadFile(filepath.Join("..", "..", "LICENSE"))
	require.NoError(t, err)
	notices, err := os.ReadFile(filepath.Join("..", "cli", "THIRD_PARTY_NOTICES"))
	require.NoError(t, err)
	out, errOut, code := apptest.RunCLI(t, t.TempDir(), nil, "license")
	require.Equal(t, 0, code, errOut)
	require.Equal(t, string(license)+"\n"+string(notices), out)
	for _, m := range []string{"Go (runtime and standard library): LICENSE", "github.com/gofiber/fiber/v2 ", "go.etcd.io/bbolt ", "github.com/wneessen/go-mail ", "github.com/jackc/pgx/v5 ", "github.com/knadh/koanf/v2 ", "filippo.io/age "} {
		require.Contains(t, out, "\n"+m, "the notices name %s", m)
	}
}
