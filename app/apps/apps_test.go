package apps_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/store"
)

// The reference app (app/identity/FORMAT.md, "Test vectors").
const (
	refID     = "tpoxyNzh0hU9G2i9agMvHyyd+pO6zGCjO9BfhrCLjd4="
	refSecret = "cTMoGGUKhwN47ypq4xAXAtVkNWeyUtMltQnYwJhxWYSvqjPVGmXd2wwa7y17QtPTZhn8bxb015CZC/e4ZI7+MQ=="
)

func TestParseIDAcceptsEveryClientSpelling(t *testing.T) {
	t.Parallel()
	want, _ := base64.StdEncoding.DecodeString(refID)
	for _, s := range []string{
		refID, strings.TrimRight(refID, "="), "tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4=",
		"tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4", "tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4%3D",
		"tpoxyNzh0hU9G2i9agMvHyyd%2BpO6zGCjO9BfhrCLjd4%3D",
	} {
		got, err := apps.ParseID(s)
		require.NoError(t, err, s)
		require.Equal(t, want, got, s)
	}
	for _, s := range []string{"", "bad-base-64", "deadbeef", refID + refID, "%zz", "tpoxy+-"} {
		_, err := apps.ParseID(s)
		require.ErrorIs(t, err, apps.ErrInvalidAppID, s)
	}
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{refID, "bad-base-64", "deadbeef", "tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4%3D"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := apps.ParseID(s)
		if err != nil {
			return
		}
		require.Len(t, id, 32)
		again, err := apps.ParseID(apps.URLID(id))
		require.NoError(t, err)
		require.Equal(t, id, again)
	})
}

func TestDeclaredAppsAndTokens(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte("hashed-token-0123456789"))
	env := apptest.New(t,
		config.DeclaredApp{Name: "plain", Secret: refSecret, AuthToken: "plain-token-0123456789", Test: true, LegacyErrors: true},
	)
	id, _ := apps.ParseID(refID)
	a, err := env.Apps.Get(id)
	require.NoError(t, err)
	require.True(t, a.Declared)
	require.True(t, a.Test)
	require.True(t, a.Options.LegacyErrors)
	require.True(t, apps.CheckToken(a, "plain-token-0123456789"))
	require.False(t, apps.CheckToken(a, "plain-token-012345678"))
	require.False(t, apps.CheckToken(a, ""))
	require.ErrorIs(t, env.Apps.Delete(id), apps.ErrDeclared)
	_, err = env.Apps.RotateToken(id)
	require.ErrorIs(t, err, apps.ErrDeclared)

	_, err = apps.NewRegistry(env.Store, []config.DeclaredApp{{Name: "h", Secret: refSecret, AuthTokenSHA256: hex.EncodeToString(sum[:])}})
	require.NoError(t, err)
	_, err = apps.NewRegistry(env.Store, []config.DeclaredApp{{Name: "a", Secret: refSecret, AuthToken: "x"}, {Name: "b", Secret: refSecret, AuthToken: "y"}})
	require.ErrorContains(t, err, "declared twice")
	_, err = apps.NewRegistry(env.Store, []config.DeclaredApp{{Name: "bad", Secret: "AAAA", AuthToken: "x"}})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "AAAA")

	created := env.CreateApp(t, false)
	list, err := env.Apps.List()
	require.NoError(t, err)
	require.Len(t, list, 2)
	require.True(t, apps.CheckToken(created.App, created.AuthToken))
	_, err = env.Apps.Create("", false, created.App.Options)
	require.ErrorIs(t, err, apps.ErrName)
}

// Stored apps are cached after their first read; a token rotation, an options change or a
// deletion is seen at once, as without the cache (Options.NoCache).
func TestCachedAppsFollowChanges(t *testing.T) {
	t.Parallel()
	for _, o := range []apps.Options{{}, {NoCache: true}} {
		t.Run(fmt.Sprintf("NoCache=%v", o.NoCache), func(t *testing.T) {
			t.Parallel()
			appsFollowChanges(t, o)
		})
	}
}

func appsFollowChanges(t *testing.T, o apps.Options) {
	env := apptest.New(t)
	reg, err := apps.NewRegistryWith(env.Store, nil, o)
	require.NoError(t, err)
	c, err := reg.Create("cached", true, store.AppOptions{})
	require.NoError(t, err)
	got, err := reg.Get(c.App.ID)
	require.NoError(t, err)
	require.True(t, apps.CheckToken(got, c.AuthToken))

	token, err := reg.RotateToken(c.App.ID)
	require.NoError(t, err)
	got, err = reg.Get(c.App.ID)
	require.NoError(t, err)
	require.False(t, apps.CheckToken(got, c.AuthToken), "the old token is refused after a rotation")
	require.True(t, apps.CheckToken(got, token))

	_, err = reg.SetOptions(c.App.ID, store.AppOptions{RegisteredUsersOnly: true})
	require.NoError(t, err)
	got, err = reg.Get(c.App.ID)
	require.NoError(t, err)
	require.True(t, got.Options.RegisteredUsersOnly, "changed options are seen at once")

	// The cache answers from memory: a change written to the store behind the registry's back
	// (which idvault never does while it runs) shows only without it.
	_, err = env.Store.SetAppOptions(c.App.ID, store.AppOptions{LegacyErrors: true})
	require.NoError(t, err)
	got, err = reg.Get(c.App.ID)
	require.NoError(t, err)
	require.Equal(t, o.NoCache, got.Options.LegacyErrors)

	require.NoError(t, reg.Delete(c.App.ID))
	_, err = reg.Get(c.App.ID)
	require.ErrorIs(t, err, apps.ErrNotFound, "a deleted app is gone")
}
