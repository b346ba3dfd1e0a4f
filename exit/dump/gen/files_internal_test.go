package gen

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A link that appears after Generate's first check (a race with whoever plants it) is still
// refused by the file creation itself, and by the publishing of a finished file.
func TestCreateNewAndPublishNeverFollowLinks(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	victim := filepath.Join(elsewhere, "victim")
	require.NoError(t, os.WriteFile(victim, []byte("untouched"), 0o644))
	dangling := filepath.Join(elsewhere, "absent")

	for _, target := range []string{victim, dangling} {
		link := filepath.Join(dir, "app.json")
		require.NoError(t, os.Symlink(target, link))
		_, err := createNew(link)
		require.ErrorContains(t, err, "already exists")
		require.ErrorContains(t, writeNew(link, []byte("secret"), true), "already exists")

		tmp := filepath.Join(dir, "tmp")
		require.NoError(t, writeNew(tmp, []byte("secret"), true))
		require.ErrorContains(t, publish(tmp, link), "already exists")
		require.NoError(t, os.Remove(tmp))
		require.NoError(t, os.Remove(link))
	}
	got, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "untouched", string(got))
	_, err = os.Lstat(dangling)
	require.ErrorIs(t, err, os.ErrNotExist, "nothing created through a dangling link")

	// Without a link the file is created with mode 0600.
	p := filepath.Join(dir, "new")
	require.NoError(t, writeNew(p, []byte("x"), true))
	st, err := os.Stat(p)
	require.NoError(t, err)
	require.Equal(t, FileMode, st.Mode().Perm())
}
