package cli_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/clitest"
)

// `idvault init --dir` refuses a directory another account could write to, or that another user
// owns (that account could swap the unit, the config or the key before they are installed, or
// add an identity-server.env the unit reads), and a directory above it that another account
// could rename it through; nothing is written. --force-permissions fixes --dir itself, never
// the directories above it.
func TestInitRefusesADirOthersCanChange(t *testing.T) {
	t.Parallel()
	initIn := func(t *testing.T, etc string, extra ...string) (string, string, int) {
		t.Helper()
		args := append([]string{"init", "--dir", etc, "--data", filepath.Join(filepath.Dir(etc), "lib")}, extra...)
		return clitest.Run(t, t.TempDir(), args...)
	}
	for _, mode := range []os.FileMode{0o770, 0o757, 0o1777} {
		etc := filepath.Join(t.TempDir(), "etc")
		require.NoError(t, os.Mkdir(etc, 0o700))
		require.NoError(t, os.Chmod(etc, mode))
		_, errOut, code := initIn(t, etc)
		require.Equal(t, 1, code, "mode %o", mode)
		require.Contains(t, errOut, "--dir "+etc+" is writable by group or others")
		require.Contains(t, errOut, "chmod go-w "+etc)
		require.Contains(t, errOut, "--force-permissions")
		requireEmpty(t, etc)

		out, errOut, code := initIn(t, etc, "--force-permissions")
		require.Equal(t, 0, code, errOut)
		st, err := os.Stat(etc)
		require.NoError(t, err)
		require.Equal(t, (mode &^ 0o022).Perm(), st.Mode().Perm(), "group and others lose write permission")
		require.Contains(t, out, "changed the mode of "+etc)
		require.FileExists(t, filepath.Join(etc, "master.key"))
	}

	// A parent another account can write to (no sticky bit): it could rename --dir and put its
	// own in its place. Refused, also with --force-permissions, and --dir is not created.
	parent := filepath.Join(t.TempDir(), "srv")
	require.NoError(t, os.Mkdir(parent, 0o700))
	require.NoError(t, os.Chmod(parent, 0o775))
	for _, extra := range [][]string{nil, {"--force-permissions"}} {
		_, errOut, code := initIn(t, filepath.Join(parent, "etc"), extra...)
		require.Equal(t, 1, code)
		require.Contains(t, errOut, parent+", above --dir "+filepath.Join(parent, "etc")+", is writable by group or others")
		require.Contains(t, errOut, "chmod go-w "+parent)
		requireEmpty(t, parent)
	}
	st, err := os.Stat(parent)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o775), st.Mode().Perm(), "a directory above --dir is never changed")
}

// An --dir owned by another user is refused; run as root, --force-permissions makes it root's.
func TestInitRefusesADirOwnedByAnotherUser(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("giving a directory to another user needs root")
	}
	etc := filepath.Join(t.TempDir(), "etc")
	require.NoError(t, os.Mkdir(etc, 0o700))
	require.NoError(t, os.Chown(etc, 65534, 65534))
	args := []string{"init", "--dir", etc, "--data", filepath.Join(filepath.Dir(etc), "lib")}
	_, errOut, code := clitest.Run(t, t.TempDir(), args...)
	require.Equal(t, 1, code)
	require.Contains(t, errOut, "--dir "+etc+" is owned by another user (uid 65534, this is uid 0)")
	requireEmpty(t, etc)

	out, errOut, code := clitest.Run(t, t.TempDir(), append(args, "--force-permissions")...)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, "changed the owner of "+etc+" from uid 65534 to root")
	st, err := os.Stat(etc)
	require.NoError(t, err)
	require.Equal(t, uint32(0), st.Sys().(*syscall.Stat_t).Uid)
}
