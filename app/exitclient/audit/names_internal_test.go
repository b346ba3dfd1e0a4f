package audit

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
)

// The audit names a holder from a private identity by the value its public identity carries,
// the one Tanker's SDKs share with and the dump's rows hold: the hashed user ID of a permanent
// identity, H_32(email) or the salted phone number hash of a provisional one, with its
// "target:value". Anything else names nobody.
func TestIdentityHolderIsThePublicIdentitysValue(t *testing.T) {
	t.Parallel()
	appID, secret, err := identity.GenerateApp(nil)
	require.NoError(t, err)
	publicValue := func(private string) (string, string) {
		pub, err := identity.PublicIdentity(private)
		require.NoError(t, err)
		raw, err := base64.StdEncoding.DecodeString(pub)
		require.NoError(t, err)
		var v struct{ Target, Value string }
		require.NoError(t, json.Unmarshal(raw, &v))
		return v.Target, v.Value
	}
	perm, err := identity.CreatePermanent(appID, secret, "alice")
	require.NoError(t, err)
	key, user, ok := identityHolder(perm, appID)
	require.True(t, ok)
	require.Equal(t, base64.StdEncoding.EncodeToString(identity.HashUserID(appID, "alice")), key)
	require.Empty(t, user)

	for target, value := range map[string]string{identity.TargetEmail: "bob@example.com", identity.TargetPhoneNumber: "+33611223344"} {
		prov, err := identity.CreateProvisional(appID, target, value)
		require.NoError(t, err)
		key, user, ok := identityHolder(prov, appID)
		require.True(t, ok, target)
		pubTarget, pubValue := publicValue(prov)
		require.Equal(t, pubTarget+":"+pubValue, key, target)
		require.True(t, strings.HasPrefix(key, "hashed_"+target+":"), key)
		require.Equal(t, target+":"+value, user)
	}

	otherApp, _, err := identity.GenerateApp(nil)
	require.NoError(t, err)
	prov, err := identity.CreateProvisional(otherApp, identity.TargetEmail, "carol@example.com")
	require.NoError(t, err)
	pub, err := identity.PublicIdentity(perm)
	require.NoError(t, err)
	for name, private := range map[string]string{"not an identity": "hello", "a public identity": pub,
		"another app's provisional identity": prov} {
		_, _, ok := identityHolder(private, appID)
		if name == "a public identity" {
			// A public permanent identity still carries the user ID: it names the user (its
			// import would be refused, and exit import says so).
			require.True(t, ok, name)
			continue
		}
		require.False(t, ok, name)
	}
}
