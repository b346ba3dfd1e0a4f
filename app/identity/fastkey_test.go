package identity

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/curve25519"
)

// The fast derivation gives exactly the pair the X25519 ladder gives for its private key.
func TestEncryptionKeyPairFromSeedMatchesLadder(t *testing.T) {
	t.Parallel()
	seeds := [][]byte{make([]byte, 32)}
	for range 500 {
		s := make([]byte, 32)
		_, _ = rand.Read(s)
		seeds = append(seeds, s)
	}
	for _, seed := range seeds {
		pub, priv, err := EncryptionKeyPairFromSeed(seed)
		require.NoError(t, err)
		require.Equal(t, byte(0), priv[0]&7, "clamped")
		require.Equal(t, byte(64), priv[31]&0xc0, "clamped")
		want, err := curve25519.X25519(priv, curve25519.Basepoint)
		require.NoError(t, err)
		require.Equal(t, want, pub)
	}
}

// Identities made with crypto/rand (the fast path) are valid: ParseProvisional checks the
// encryption key pair with the ladder, and the public identity is the derived one.
func TestCreateProvisionalFastPathIsValid(t *testing.T) {
	t.Parallel()
	appID, _, _ := vecApp(t)
	seen := map[string]bool{}
	for range 100 {
		secret, public, err := CreateProvisionalPair(appID, TargetEmail, vecEmail, nil)
		require.NoError(t, err)
		p, err := ParseProvisional(secret, appID)
		require.NoError(t, err)
		require.False(t, seen[string(p.PrivateEncryptionKey)], "fresh keys every time")
		seen[string(p.PrivateEncryptionKey)] = true
		want, err := PublicIdentity(secret)
		require.NoError(t, err)
		require.Equal(t, want, public)
		requireCanonical(t, secret, secretProvisionalKeys...)
	}
	secret, err := CreateProvisional(appID, TargetPhoneNumber, "+33612345678")
	require.NoError(t, err)
	_, err = ParseProvisional(secret, appID)
	require.NoError(t, err)
}
