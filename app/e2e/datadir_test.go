package e2e_test

import (
	"crypto/rand"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/store"
)

// dataDirWithApp makes a data directory with `idvault init`'s files whose store holds an app of
// the given ID and name (a secret of its own, a token hash nothing matches), put there by the
// test itself rather than by a command, and returns it with its environment.
func dataDirWithApp(t *testing.T, id []byte, name string) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	env = apptest.DataEnv(t, dir)
	apptest.InitData(t, dir, env)
	mk, _, err := store.LoadOrCreateMasterKey(filepath.Join(dir, "master.key"), filepath.Join(dir, "idvault.db"))
	require.NoError(t, err)
	st, err := store.Open(store.Options{Path: filepath.Join(dir, "idvault.db"), MasterKey: mk})
	require.NoError(t, err)
	_, secret, err := identity.GenerateApp(rand.Reader)
	require.NoError(t, err)
	require.NoError(t, st.CreateApp(store.App{ID: id, Name: name, Secret: secret, AuthTokenHash: make([]byte, 32)}))
	require.NoError(t, st.Close())
	return dir, env
}
