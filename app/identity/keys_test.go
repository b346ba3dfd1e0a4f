package identity

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppVector(t *testing.T) {
	appID, appSecret, appPublicKey := vecApp(t)

	got, err := AppIDFromSecret(appSecret)
	require.NoError(t, err)
	require.Equal(t, appID, got)

	pub, err := AppPublicKey(appSecret)
	require.NoError(t, err)
	require.Equal(t, appPublicKey, pub)

	// The seed half really derives the public half.
	require.Equal(t, []byte(ed25519.NewKeyFromSeed(appSecret[:32])), appSecret)
	require.NoError(t, CheckApp(appID, appSecret))
}

func TestCheckAppErrors(t *testing.T) {
	appID, appSecret, _ := vecApp(t)
	badSeed := bytes.Clone(appSecret)
	badSeed[0] ^= 1

	tests := []struct {
		name      string
		appID     []byte
		appSecret []byte
		is        error
		msg       string
	}{
		{"short app id", appID[:31], appSecret, ErrInvalidAppID, "check app: wrong byte size for AppID: 31, should be 32"},
		{"nil app id", nil, appSecret, ErrInvalidAppID, "check app: wrong byte size for AppID: 0, should be 32"},
		{"long secret", appID, append(bytes.Clone(appSecret), 0), ErrInvalidAppSecret, "check app: wrong byte size for AppSecret: 65, should be 64"},
		{"other app", b64(t, vecOtherAppID), appSecret, ErrAppMismatch, "check app: app secret and app ID mismatch"},
		{"seed does not derive public key", appID, badSeed, ErrInvalidAppSecret, "check app: invalid AppSecret: its seed does not derive its public key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckApp(tc.appID, tc.appSecret)
			require.ErrorIs(t, err, tc.is)
			require.EqualError(t, err, tc.msg)
		})
	}
}

func TestAppIDFromSecretSize(t *testing.T) {
	_, err := AppIDFromSecret(make([]byte, 32))
	require.ErrorIs(t, err, ErrInvalidAppSecret)
	require.EqualError(t, err, "app id from secret: wrong byte size for AppSecret: 32, should be 64")
	_, err = AppPublicKey(nil)
	require.ErrorIs(t, err, ErrInvalidAppSecret)
}

func TestGenerateApp(t *testing.T) {
	seed := bytes.Repeat([]byte{7}, 32)
	appID, appSecret, err := GenerateApp(bytes.NewReader(seed))
	require.NoError(t, err)
	require.Len(t, appID, AppIDSize)
	require.Len(t, appSecret, AppSecretSize)
	require.Equal(t, seed, appSecret[:32])
	require.NoError(t, CheckApp(appID, appSecret))

	again, _, err := GenerateApp(bytes.NewReader(seed))
	require.NoError(t, err)
	require.Equal(t, appID, again, "deterministic for a given seed")

	fresh, freshSecret, err := GenerateApp(nil)
	require.NoError(t, err)
	require.NoError(t, CheckApp(fresh, freshSecret))
	require.NotEqual(t, appID, fresh)

	_, _, err = GenerateApp(failingReader{})
	require.EqualError(t, err, "generate app: read random: entropy exhausted")
	_, _, err = GenerateApp(bytes.NewReader(seed[:31]))
	require.Error(t, err)
}

func TestHashVectors(t *testing.T) {
	appID, _, _ := vecApp(t)
	phoneSigPriv := b64(t, vecPhoneSigPriv)
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"user id b_eich", HashUserID(appID, vecUserID), vecHashedUserID},
		{"user id userID", HashUserID(appID, "userID"), vecHashedUserIDUserID},
		{"email brendan", HashEmail(vecEmail), vecHashedEmail},
		{"email example", HashEmail("email@example.com"), vecHashedEmailSample},
		{"phone salt", hash32(phoneSigPriv), vecPhoneSalt},
		{"phone", HashPhoneNumber(phoneSigPriv, vecPhone), vecHashedPhone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, base64.StdEncoding.EncodeToString(tc.got))
		})
	}
}

func TestHashPrimitives(t *testing.T) {
	// H_n is BLAKE2b with an n-byte digest parameter, not a truncation.
	empty := "0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8"
	require.Equal(t, empty, hex.EncodeToString(hash32()))
	require.Equal(t, "cae66941d9efbd404e4d88758ea67670", hex.EncodeToString(hash16()))
	require.Equal(t, hash32([]byte("ab")), hash32([]byte("a"), []byte("b")))
}

func TestUserSecretVector(t *testing.T) {
	userSecret := b64(t, vecUserSecret)
	hashed := b64(t, vecHashedUserID)
	require.Equal(t, byte(0x32), userSecret[31])
	require.True(t, CheckUserSecret(userSecret, hashed))

	tampered := bytes.Clone(userSecret)
	tampered[31] ^= 0xff
	require.False(t, CheckUserSecret(tampered, hashed))
	require.False(t, CheckUserSecret(userSecret[:31], hashed))
	require.False(t, CheckUserSecret(userSecret, b64(t, vecHashedUserIDUserID)))
}

func TestNewUserSecret(t *testing.T) {
	hashed := b64(t, vecHashedUserID)
	userSecret := b64(t, vecUserSecret)
	got, err := newUserSecret(bytes.NewReader(userSecret[:31]), hashed)
	require.NoError(t, err)
	require.Equal(t, userSecret, got)

	_, err = newUserSecret(failingReader{}, hashed)
	require.Error(t, err)
}

func TestNewEncryptionKeyPairClamps(t *testing.T) {
	raw := bytes.Repeat([]byte{0xff}, 32)
	pub, priv, err := newEncryptionKeyPair(bytes.NewReader(raw))
	require.NoError(t, err)
	require.Equal(t, byte(0xf8), priv[0])
	require.Equal(t, byte(0x7f), priv[31])
	for i := 1; i < 31; i++ {
		require.Equal(t, byte(0xff), priv[i])
	}
	require.Len(t, pub, 32)

	// Clamping does not change the public key: X25519 clamps anyway.
	vecPriv := b64(t, vecEmailEncPriv)
	pub, priv, err = newEncryptionKeyPair(bytes.NewReader(vecPriv))
	require.NoError(t, err)
	require.Equal(t, b64(t, vecEmailEncPub), pub)
	require.NotEqual(t, vecPriv, priv, "the vector scalar is unclamped")

	_, _, err = newEncryptionKeyPair(failingReader{})
	require.EqualError(t, err, "read random: entropy exhausted")
}
