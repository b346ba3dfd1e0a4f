package cli_test

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/store"
)

// openDataDir opens the store of dir (idvault.db under master.key, the key made if missing), as
// a test's own access beside the commands it runs; the caller closes it (the commands then open
// the file themselves).
func openDataDir(t *testing.T, dir string) *store.Store {
	t.Helper()
	mk, _, err := store.LoadOrCreateMasterKey(filepath.Join(dir, "master.key"), filepath.Join(dir, "idvault.db"))
	require.NoError(t, err)
	st, err := store.Open(store.Options{Path: filepath.Join(dir, "idvault.db"), MasterKey: mk})
	require.NoError(t, err)
	return st
}
