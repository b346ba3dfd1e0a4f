package identity

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// configErrorCases are identity-go's config.go checks, in its order.
func configErrorCases() []struct {
	name string
	cfg  Config
	is   error
	msg  string
} {
	const shortID = "AAAA"
	return []struct {
		name string
		cfg  Config
		is   error
		msg  string
	}{
		{"app id not base64", Config{AppID: "not b64!", AppSecret: vecAppSecret}, ErrInvalidAppID,
			"unable to decode AppID 'not b64!', should be a valid base64 string"},
		{"app id unpadded", Config{AppID: strings.TrimRight(vecAppID, "="), AppSecret: vecAppSecret}, ErrInvalidAppID,
			"unable to decode AppID '" + strings.TrimRight(vecAppID, "=") + "', should be a valid base64 string"},
		{"app id not base64 wins over bad secret", Config{AppID: "%", AppSecret: "%"}, ErrInvalidAppID,
			"unable to decode AppID '%', should be a valid base64 string"},
		{"app id too short", Config{AppID: shortID, AppSecret: vecAppSecret}, ErrInvalidAppID,
			"wrong byte size for AppID: 3, should be 32"},
		{"app id size wins over bad secret", Config{AppID: shortID, AppSecret: "%"}, ErrInvalidAppID,
			"wrong byte size for AppID: 3, should be 32"},
		{"app id empty", Config{AppID: "", AppSecret: vecAppSecret}, ErrInvalidAppID,
			"wrong byte size for AppID: 0, should be 32"},
		{"app id is the secret", Config{AppID: vecAppSecret, AppSecret: vecAppSecret}, ErrInvalidAppID,
			"wrong byte size for AppID: 64, should be 32"},
		// Deviation: identity-go echoes the AppSecret here.
		{"app secret not base64", Config{AppID: vecAppID, AppSecret: vecAppSecret[:20] + "!"}, ErrInvalidAppSecret,
			"unable to decode AppSecret, should be a valid base64 string"},
		{"app secret too short", Config{AppID: vecAppID, AppSecret: vecAppID}, ErrInvalidAppSecret,
			"wrong byte size for AppSecret: 32, should be 64"},
		{"app secret empty", Config{AppID: vecAppID, AppSecret: ""}, ErrInvalidAppSecret,
			"wrong byte size for AppSecret: 0, should be 64"},
		{"mismatch", Config{AppID: vecOtherAppID, AppSecret: vecAppSecret}, ErrAppMismatch,
			"app secret and app ID mismatch"},
	}
}

func TestCreateConfigErrors(t *testing.T) {
	for _, tc := range configErrorCases() {
		t.Run(tc.name, func(t *testing.T) {
			id, err := Create(tc.cfg, vecUserID)
			require.Empty(t, id)
			require.ErrorIs(t, err, tc.is)
			require.EqualError(t, err, tc.msg)
			require.NotContains(t, err.Error(), vecAppSecret[:20], "never echo the secret")

			id, err = CreateProvisionalIdentity(tc.cfg, TargetEmail, vecEmail)
			require.Empty(t, id)
			require.ErrorIs(t, err, tc.is)
			require.EqualError(t, err, tc.msg)
		})
	}
}

func TestConfigErrorType(t *testing.T) {
	_, err := Create(Config{AppID: "AAAA", AppSecret: vecAppSecret}, "u")
	var cfgErr *ConfigError
	require.True(t, errors.As(err, &cfgErr))
	require.Equal(t, "AppID", cfgErr.Field)
	require.Equal(t, 3, cfgErr.Size)
	require.False(t, errors.Is(err, ErrInvalidAppSecret))
}

func TestCreateProvisionalIdentityCheckOrder(t *testing.T) {
	// identity-go: config decoding, then the target, then the mismatch.
	_, err := CreateProvisionalIdentity(Config{AppID: "AAAA", AppSecret: vecAppSecret}, "bad", vecEmail)
	require.EqualError(t, err, "wrong byte size for AppID: 3, should be 32")

	_, err = CreateProvisionalIdentity(Config{AppID: vecOtherAppID, AppSecret: vecAppSecret}, "bad", vecEmail)
	require.ErrorIs(t, err, ErrUnsupportedProvisionalTarget)
	require.EqualError(t, err, "unsupported provisional identity target")

	for _, target := range []string{"user", "hashed_email", "hashed_phone_number", "", "Email"} {
		_, err = CreateProvisionalIdentity(vecConfig(), target, vecEmail)
		require.EqualError(t, err, "unsupported provisional identity target", target)
	}
}

func TestCreateCompat(t *testing.T) {
	appID, _, appPublicKey := vecApp(t)
	for _, userID := range []string{vecUserID, ""} { // identity-go accepts an empty user ID
		id, err := Create(vecConfig(), userID)
		require.NoError(t, err)
		requireCanonical(t, id, secretPermanentKeys...)
		p, err := ParsePermanent(id, appID, appPublicKey)
		require.NoError(t, err)
		require.NoError(t, p.CheckUserID(userID))

		pub, err := GetPublicIdentity(id)
		require.NoError(t, err)
		if userID == vecUserID {
			require.Equal(t, vecPublicPermanent, pub)
		}
	}
}

func TestCreateProvisionalIdentityCompat(t *testing.T) {
	appID, _, _ := vecApp(t)
	tests := []struct{ target, value, public string }{
		{TargetEmail, vecEmail, ""},
		{TargetPhoneNumber, vecPhone, ""},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			id, err := CreateProvisionalIdentity(vecConfig(), tc.target, tc.value)
			require.NoError(t, err)
			requireCanonical(t, id, secretProvisionalKeys...)
			p, err := ParseProvisional(id, appID)
			require.NoError(t, err)
			require.Equal(t, tc.value, p.Value)

			pub, err := GetPublicIdentity(id)
			require.NoError(t, err)
			require.Equal(t, p.PublicIdentity(), pub)
		})
	}
	// The hashed email does not depend on the keys.
	id, err := CreateProvisionalIdentity(vecConfig(), TargetEmail, vecEmail)
	require.NoError(t, err)
	pub, err := GetPublicIdentity(id)
	require.NoError(t, err)
	require.Contains(t, dec(t, pub), `"target":"hashed_email","value":"`+vecHashedEmail+`"`)
}

func TestCreateRejectsInconsistentSecret(t *testing.T) {
	secret := b64(t, vecAppSecret)
	secret[5] ^= 0x10 // seed changed, public half (and so the app ID) intact
	cfg := Config{AppID: vecAppID, AppSecret: b64String(secret)}
	_, err := Create(cfg, vecUserID)
	require.ErrorIs(t, err, ErrInvalidAppSecret)
	require.EqualError(t, err, "invalid AppSecret: its seed does not derive its public key")
	_, err = CreateProvisionalIdentity(cfg, TargetEmail, vecEmail)
	require.ErrorIs(t, err, ErrInvalidAppSecret)
	_, err = CreatePermanent(b64(t, vecAppID), secret, vecUserID)
	require.ErrorIs(t, err, ErrInvalidAppSecret)
}

func TestConfigDecode(t *testing.T) {
	appID, appSecret, err := vecConfig().Decode()
	require.NoError(t, err)
	require.Equal(t, b64(t, vecAppID), appID)
	require.Equal(t, b64(t, vecAppSecret), appSecret)
}
