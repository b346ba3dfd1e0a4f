package directory_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/identity"
)

// Without its key pool (Options.NoKeyPool) the directory makes every identity on the request's
// path: the identities are the same kind, valid for their app, and nothing is made ahead.
func TestNoKeyPoolMakesIdentitiesOnTheRequestsPath(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	a := env.CreateApp(t, false).App
	d := directory.NewWith(env.Store, directory.Options{NoKeyPool: true})
	t.Cleanup(d.Close)
	for i := range 3 {
		r, err := d.Permanent(a, fmt.Sprintf("nopool%d@example.com", i))
		require.NoError(t, err)
		p, err := identity.ParsePermanent(r.PermanentIdentity, a.ID, a.Secret[32:])
		require.NoError(t, err)
		require.NoError(t, p.CheckUserID(r.UserID))
		_, err = d.PublicIdentity(a, fmt.Sprintf("nopool-provisional%d@example.com", i), directory.IdentityServerPolicy)
		require.NoError(t, err)
	}
	require.Equal(t, identity.KeyPoolStats{}, d.KeyPoolStats(), "no pool: nothing taken, missed or ready")
}
