package apptest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/identity"
)

// CheckPermanent parses a secret permanent identity with the identity library and requires the
// right app, a valid delegation signature and a valid user secret.
func CheckPermanent(t testing.TB, a apps.App, perm string) *identity.Permanent {
	t.Helper()
	pk, err := identity.AppPublicKey(a.Secret)
	require.NoError(t, err)
	p, err := identity.ParsePermanent(perm, a.ID, pk)
	require.NoError(t, err)
	require.Equal(t, a.ID, p.AppID)
	return p
}

// CheckProvisional parses a secret provisional identity and requires the right app and the
// target email with value email.
func CheckProvisional(t testing.TB, a apps.App, prov, email string) {
	t.Helper()
	p, err := identity.ParseProvisional(prov, a.ID)
	require.NoError(t, err)
	require.Equal(t, a.ID, p.AppID)
	require.Equal(t, identity.TargetEmail, p.Target)
	require.Equal(t, email, p.Value)
}

// PublicOf derives the public identity of private with the identity library.
func PublicOf(t testing.TB, private string) string {
	t.Helper()
	pub, err := identity.PublicIdentity(private)
	require.NoError(t, err)
	return pub
}
