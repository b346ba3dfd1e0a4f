package identity

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/curve25519"
)

func TestIssuerReproducesPermanentVector(t *testing.T) {
	appID, appSecret, _ := vecApp(t)
	is, err := NewIssuer(appID, appSecret)
	require.NoError(t, err)
	ephPriv := b64(t, vecEphemeralPrivateKey)
	userSecret := b64(t, vecUserSecret)

	secret, public, err := is.CreatePermanentWith(vecUserID, stream(ephPriv[:32], userSecret[:31]))
	require.NoError(t, err)
	require.Equal(t, vecPermanent, secret)
	require.Equal(t, vecPublicPermanent, public)
}

// The Issuer's identities are the package functions' identities, byte for byte, and their
// public identities are what PublicIdentity derives from them, for the same random bytes.
func TestIssuerMatchesPackageFunctions(t *testing.T) {
	appID, appSecret := newTestApp(t, 7)
	is, err := NewIssuer(appID, appSecret)
	require.NoError(t, err)
	for i := range 50 {
		random := make([]byte, 64)
		_, _ = rand.Read(random)
		user := fmt.Sprintf("user-%d", i)

		want, err := CreatePermanentWith(appID, appSecret, user, bytes.NewReader(random))
		require.NoError(t, err)
		secret, public, err := is.CreatePermanentWith(user, bytes.NewReader(random))
		require.NoError(t, err)
		require.Equal(t, want, secret)
		wantPub, err := PublicIdentity(secret)
		require.NoError(t, err)
		require.Equal(t, wantPub, public)
		p, err := ParsePermanent(secret, appID, appSecret[32:])
		require.NoError(t, err)
		require.NoError(t, p.CheckUserID(user))

		for _, target := range []string{TargetEmail, TargetPhoneNumber} {
			value := fmt.Sprintf("u%d@example.com", i)
			if target == TargetPhoneNumber {
				value = fmt.Sprintf("+3361234%04d", i)
			}
			want, err := CreateProvisionalWith(appID, target, value, bytes.NewReader(random))
			require.NoError(t, err)
			secret, public, err := CreateProvisionalPair(appID, target, value, bytes.NewReader(random))
			require.NoError(t, err)
			require.Equal(t, want, secret)
			wantPub, err := PublicIdentity(secret)
			require.NoError(t, err)
			require.Equal(t, wantPub, public)
			_, err = ParseProvisional(secret, appID)
			require.NoError(t, err)
		}
	}
	secret, public, err := is.CreateProvisional(TargetEmail, vecEmail)
	require.NoError(t, err)
	wantPub, err := PublicIdentity(secret)
	require.NoError(t, err)
	require.Equal(t, wantPub, public)
}

func TestIssuerChecksTheApp(t *testing.T) {
	appID, appSecret, _ := vecApp(t)
	badSeed := bytes.Clone(appSecret)
	badSeed[0] ^= 1
	_, err := NewIssuer(appID, badSeed)
	require.ErrorIs(t, err, ErrInvalidAppSecret)
	_, err = NewIssuer(b64(t, vecOtherAppID), appSecret)
	require.ErrorIs(t, err, ErrAppMismatch)
	_, err = NewIssuer(appID[:31], appSecret)
	require.ErrorIs(t, err, ErrInvalidAppID)

	is, err := NewIssuer(appID, appSecret)
	require.NoError(t, err)
	require.True(t, is.Matches(appID, appSecret))
	require.False(t, is.Matches(appID, badSeed))
	require.False(t, is.Matches(b64(t, vecOtherAppID), appSecret))
	require.False(t, is.Matches(appID, appSecret[:63]))
	require.Equal(t, appID, is.AppID())

	// The Issuer keeps its own copy: a caller's buffer changing later changes nothing.
	appSecret[0] ^= 1
	require.False(t, is.Matches(appID, appSecret))
	appSecret[0] ^= 1

	_, _, err = is.CreatePermanentWith("u", failingReader{})
	require.ErrorContains(t, err, "entropy exhausted")
	_, _, err = CreateProvisionalPair(appID, "user", "x", nil)
	require.ErrorIs(t, err, ErrUnsupportedProvisionalTarget)
	_, _, err = CreateProvisionalPair(appID[:3], TargetEmail, "x", nil)
	require.ErrorIs(t, err, ErrInvalidAppID)
}

func TestIssuerStringRedactsSecret(t *testing.T) {
	appID, appSecret, _ := vecApp(t)
	is, err := NewIssuer(appID, appSecret)
	require.NoError(t, err)
	for _, s := range []string{fmt.Sprint(is), fmt.Sprintf("%v", *is), fmt.Sprintf("%#v", is), fmt.Sprintf("%+v", *is)} {
		require.NotContains(t, s, vecAppSecret)
		require.NotContains(t, s, fmt.Sprintf("%x", appSecret[:32]))
		require.Contains(t, s, "redacted")
	}
}

// X25519Base is X25519 with the base point, for clamped and unclamped scalars alike.
func TestX25519BaseMatchesLadder(t *testing.T) {
	scalars := [][]byte{b64(t, vecEmailEncPriv), bytes.Repeat([]byte{0xff}, 32), make([]byte, 32)}
	for range 200 {
		s := make([]byte, 32)
		_, _ = rand.Read(s)
		scalars = append(scalars, s)
	}
	for _, s := range scalars {
		got, err := X25519Base(s)
		want, wantErr := curve25519.X25519(s, curve25519.Basepoint)
		if wantErr != nil {
			require.Error(t, err)
			continue
		}
		require.NoError(t, err)
		require.Equal(t, want, got)
	}
	_, err := X25519Base(make([]byte, 31))
	require.Error(t, err)
}

// The published provisional vector's public identity comes out of the same random bytes (its
// private encryption key is unclamped, so only the public side can be compared).
func TestCreateProvisionalPairReproducesPublicVector(t *testing.T) {
	appID, _, _ := vecApp(t)
	_, public, err := CreateProvisionalPair(appID, TargetEmail, vecEmail,
		stream(b64(t, vecEmailSigPriv)[:32], b64(t, vecEmailEncPriv)))
	require.NoError(t, err)
	require.Equal(t, vecPublicProvisionalEmail, public)
}
