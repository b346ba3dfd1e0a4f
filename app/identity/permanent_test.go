package identity

import (
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// edit decodes a b64 identity, applies fn to its object and re-encodes it
// keeping the key order.
func edit(t testing.TB, identity string, fn func(o *object)) string {
	t.Helper()
	o, err := decodeObject(b64(t, identity), false)
	require.NoError(t, err)
	fn(o)
	data, err := o.MarshalJSON()
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(data)
}

func withField(t testing.TB, identity, key string, value any) string {
	t.Helper()
	return edit(t, identity, func(o *object) { o.set(key, value) })
}

func withoutField(t testing.TB, identity, key string) string {
	t.Helper()
	return edit(t, identity, func(o *object) {
		if i := o.index(key); i >= 0 {
			o.members = append(o.members[:i], o.members[i+1:]...)
		}
	})
}

// flipped returns the b64 of the decoded value with one bit of byte i flipped.
func flipped(t testing.TB, value string, i int) string {
	t.Helper()
	b := b64(t, value)
	b[i] ^= 0x01
	return base64.StdEncoding.EncodeToString(b)
}

func TestCreatePermanentWithReproducesVector(t *testing.T) {
	appID, appSecret, _ := vecApp(t)
	ephPriv := b64(t, vecEphemeralPrivateKey)
	userSecret := b64(t, vecUserSecret)

	// Randomness order: ephemeral seed (32 bytes), then user secret (31 bytes).
	got, err := CreatePermanentWith(appID, appSecret, vecUserID, stream(ephPriv[:32], userSecret[:31]))
	require.NoError(t, err)
	require.Equal(t, vecPermanent, got)
	requireCanonical(t, got, secretPermanentKeys...)
}

func TestParsePermanentVector(t *testing.T) {
	appID, _, appPublicKey := vecApp(t)
	p, err := ParsePermanent(vecPermanent, appID, appPublicKey)
	require.NoError(t, err)
	require.Equal(t, appID, p.AppID)
	require.Equal(t, b64(t, vecHashedUserID), p.UserID)
	require.Equal(t, b64(t, vecDelegationSignature), p.DelegationSignature)
	require.Equal(t, ed25519.PublicKey(b64(t, vecEphemeralPublicKey)), p.EphemeralPublicSignatureKey)
	require.Equal(t, ed25519.PrivateKey(b64(t, vecEphemeralPrivateKey)), p.EphemeralPrivateSignatureKey)
	require.Equal(t, b64(t, vecUserSecret), p.UserSecret)

	require.NoError(t, p.CheckUserID(vecUserID))
	err = p.CheckUserID("someone else")
	require.ErrorIs(t, err, ErrUserMismatch)
	require.Equal(t, vecPublicPermanent, p.PublicIdentity())
	require.Equal(t, vecPermanent, p.SecretIdentity(), "re-serialised byte for byte")

	// The alphabetical legacy encoding parses to the same identity.
	old, err := ParsePermanent(vecOldPermanent, appID, appPublicKey)
	require.NoError(t, err)
	require.Equal(t, p, old)
}

func TestPermanentStringRedactsSecrets(t *testing.T) {
	appID, _, appPublicKey := vecApp(t)
	p, err := ParsePermanent(vecPermanent, appID, appPublicKey)
	require.NoError(t, err)
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		for _, v := range []any{p, *p} {
			out := fmt.Sprintf(format, v)
			require.Contains(t, out, "redacted")
			require.NotContains(t, out, vecUserSecret)
			require.NotContains(t, out, vecEphemeralPrivateKey)
			require.NotContains(t, out, fmt.Sprint(p.UserSecret))
		}
	}
}

func TestParsePermanentErrors(t *testing.T) {
	appID, appSecret, appPublicKey := vecApp(t)
	otherID, otherSecret := newTestApp(t, 9)
	fromOtherApp, err := CreatePermanent(otherID, otherSecret, vecUserID)
	require.NoError(t, err)
	ephPriv := b64(t, vecEphemeralPrivateKey)
	userSecret := b64(t, vecUserSecret)
	// Signed by the right app for another ephemeral key, then the key swapped.
	other, err := CreatePermanentWith(appID, appSecret, vecUserID, stream(bytes.Repeat([]byte{1}, 32), userSecret[:31]))
	require.NoError(t, err)
	otherSig := func() string {
		o, err := decodeObject(b64(t, other), true)
		require.NoError(t, err)
		v, _ := o.get(keyDelegationSignature)
		return v.(string)
	}()
	// A private key whose tail is right but whose seed is not.
	badSeed := bytes.Clone(ephPriv)
	badSeed[0] ^= 1

	tests := []parseErrorCase{
		{"not base64", "some identity", []error{ErrMalformedIdentity}, "illegal base64 data at input byte 4"},
		{"unpadded base64", strings.TrimRight(vecPermanent, "="), []error{ErrMalformedIdentity}, "illegal base64"},
		{"not json", enc("not json"), []error{ErrMalformedIdentity}, "invalid character"},
		{"json array", enc(`[1,2]`), []error{ErrMalformedIdentity}, "not a JSON object"},
		{"json null", enc(`null`), []error{ErrMalformedIdentity}, "not a JSON object"},
		{"trailing data", enc(dec(t, vecPermanent) + "{}"), []error{ErrMalformedIdentity}, "invalid character"},
		{"public identity", vecPublicPermanent, []error{ErrInvalidIdentity, ErrPublicIdentity}, ""},
		{"provisional identity", vecProvisionalEmail, []error{ErrInvalidIdentity, ErrUnsupportedTarget}, `target "email"`},
		{"missing target", withoutField(t, vecPermanent, keyTarget), []error{ErrInvalidIdentity}, "missing target"},
		{"non-string target", withField(t, vecPermanent, keyTarget, 1.0), []error{ErrMalformedIdentity}, "target is not a string"},
		{"wrong app", fromOtherApp, []error{ErrInvalidIdentity, ErrWrongApp}, ""},
		{"trustchain id swapped", withField(t, vecPermanent, keyTrustchainID, vecOtherAppID), []error{ErrInvalidIdentity, ErrWrongApp}, ""},
		{"short trustchain id", withField(t, vecPermanent, keyTrustchainID, "AAAA"), []error{ErrInvalidIdentity}, "trustchain_id has 3 bytes, want 32"},
		{"missing value", withoutField(t, vecPermanent, keyValue), []error{ErrInvalidIdentity}, "missing value"},
		{"missing signature", withoutField(t, vecPermanent, keyDelegationSignature), []error{ErrInvalidIdentity}, "missing delegation_signature"},
		{"short signature", withField(t, vecPermanent, keyDelegationSignature, vecUserSecret), []error{ErrInvalidIdentity}, "delegation_signature has 32 bytes, want 64"},
		{"bad base64 field", withField(t, vecPermanent, keyUserSecret, "!!!!"), []error{ErrMalformedIdentity}, "user_secret is not valid base64"},
		{"non-canonical base64 field", withField(t, vecPermanent, keyUserSecret, strings.Replace(vecUserSecret, "jI=", "jJ=", 1)), []error{ErrMalformedIdentity}, "user_secret is not valid base64"},
		{"null field", withField(t, vecPermanent, keyUserSecret, nil), []error{ErrMalformedIdentity}, "user_secret is not a string"},
		{"tampered signature", withField(t, vecPermanent, keyDelegationSignature, flipped(t, vecDelegationSignature, 10)), []error{ErrInvalidIdentity, ErrBadDelegationSignature}, ""},
		{"signature of another key", withField(t, vecPermanent, keyDelegationSignature, otherSig), []error{ErrInvalidIdentity, ErrBadDelegationSignature}, ""},
		{"tampered value", withField(t, vecPermanent, keyValue, vecHashedUserIDUserID), []error{ErrInvalidIdentity, ErrBadDelegationSignature}, ""},
		{"tampered user secret", withField(t, vecPermanent, keyUserSecret, flipped(t, vecUserSecret, 31)), []error{ErrInvalidIdentity, ErrBadUserSecret}, ""},
		{"tampered user secret body", withField(t, vecPermanent, keyUserSecret, flipped(t, vecUserSecret, 0)), []error{ErrInvalidIdentity, ErrBadUserSecret}, ""},
		{"ephemeral private tail", withField(t, vecPermanent, keyEphemeralPrivateSignatureKey, flipped(t, vecEphemeralPrivateKey, 40)), []error{ErrInvalidIdentity, ErrKeyMismatch}, "ephemeral"},
		{"ephemeral private seed", withField(t, vecPermanent, keyEphemeralPrivateSignatureKey, base64.StdEncoding.EncodeToString(badSeed)), []error{ErrInvalidIdentity, ErrKeyMismatch}, "ephemeral"},
		{"duplicate key", enc(strings.Replace(dec(t, vecPermanent), `"target":"user"`, `"target":"user","target":"user"`, 1)), []error{ErrMalformedIdentity}, `duplicate key "target"`},
		{"case variant key", enc(strings.Replace(dec(t, vecPermanent), `"target":"user"`, `"target":"user","Trustchain_ID":"x"`, 1)), []error{ErrMalformedIdentity}, `"Trustchain_ID" differs from "trustchain_id" only by case`},
	}
	requireParseErrors(t, tests, func(s string) (*Permanent, error) { return ParsePermanent(s, appID, appPublicKey) },
		"parse permanent identity: ", vecUserSecret, vecEphemeralPrivateKey)
}

func TestParsePermanentAppErrors(t *testing.T) {
	appID, _, appPublicKey := vecApp(t)
	_, err := ParsePermanent(vecPermanent, appID[:16], appPublicKey)
	require.ErrorIs(t, err, ErrInvalidAppID)
	_, err = ParsePermanent(vecPermanent, appID, appPublicKey[:16])
	require.ErrorIs(t, err, ErrAppMismatch)
	_, err = ParsePermanent(vecPermanent, b64(t, vecOtherAppID), appPublicKey)
	require.ErrorIs(t, err, ErrAppMismatch)
	otherID, otherSecret := newTestApp(t, 3)
	_, err = ParsePermanent(vecPermanent, otherID, otherSecret[32:])
	require.ErrorIs(t, err, ErrWrongApp)
}

func TestParsePermanentIgnoresUnknownKeys(t *testing.T) {
	appID, _, appPublicKey := vecApp(t)
	id := enc(strings.Replace(dec(t, vecPermanent), `{`, `{"comment":"x","n":[1,{"a":null}],`, 1))
	_, err := ParsePermanent(id, appID, appPublicKey)
	require.NoError(t, err)
}

func TestPermanentRoundTrip(t *testing.T) {
	appID, appSecret := newTestApp(t, 42)
	appPublicKey := appSecret[32:]
	for _, userID := range []string{"alice", "", "ünïcødé", "a&b<c>", "with \"quotes\" and \\ and \u2028"} {
		t.Run(userID, func(t *testing.T) {
			id, err := CreatePermanent(appID, appSecret, userID)
			require.NoError(t, err)
			requireCanonical(t, id, secretPermanentKeys...)

			p, err := ParsePermanent(id, appID, appPublicKey)
			require.NoError(t, err)
			require.NoError(t, p.CheckUserID(userID))
			require.Equal(t, HashUserID(appID, userID), p.UserID)
			require.True(t, ed25519.Verify(appPublicKey, append(bytes.Clone(p.EphemeralPublicSignatureKey), p.UserID...), p.DelegationSignature))
			require.True(t, CheckUserSecret(p.UserSecret, p.UserID))

			pub, err := PublicIdentity(id)
			require.NoError(t, err)
			require.Equal(t, p.PublicIdentity(), pub)
			requireCanonical(t, pub, publicPermanentKeys...)
			require.Equal(t, fmt.Sprintf(`{"trustchain_id":%q,"target":"user","value":%q}`,
				base64.StdEncoding.EncodeToString(appID), base64.StdEncoding.EncodeToString(p.UserID)), dec(t, pub))

			// Already canonical: upgrade is the identity.
			up, err := Upgrade(id)
			require.NoError(t, err)
			require.Equal(t, id, up)

			// Wrong app rejected.
			otherID, otherSecret := newTestApp(t, 43)
			_, err = ParsePermanent(id, otherID, otherSecret[32:])
			require.ErrorIs(t, err, ErrWrongApp)
		})
	}

	a, err := CreatePermanent(appID, appSecret, "alice")
	require.NoError(t, err)
	b, err := CreatePermanent(appID, appSecret, "alice")
	require.NoError(t, err)
	require.NotEqual(t, a, b, "fresh randomness per identity")
}

func TestCreatePermanentErrors(t *testing.T) {
	appID, appSecret, _ := vecApp(t)
	tests := []struct {
		name      string
		appID     []byte
		appSecret []byte
		rand      *failingReader
		is        error
		msg       string
	}{
		{"short app id", appID[:5], appSecret, nil, ErrInvalidAppID, "create permanent identity: wrong byte size for AppID: 5, should be 32"},
		{"short secret", appID, appSecret[:63], nil, ErrInvalidAppSecret, "create permanent identity: wrong byte size for AppSecret: 63, should be 64"},
		{"mismatch", b64(t, vecOtherAppID), appSecret, nil, ErrAppMismatch, "create permanent identity: app secret and app ID mismatch"},
		{"random failure", appID, appSecret, &failingReader{}, nil, "create permanent identity: ephemeral key: read random: entropy exhausted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			if tc.rand != nil {
				_, err = CreatePermanentWith(tc.appID, tc.appSecret, vecUserID, tc.rand)
			} else {
				_, err = CreatePermanent(tc.appID, tc.appSecret, vecUserID)
			}
			if tc.is != nil {
				require.ErrorIs(t, err, tc.is)
			}
			require.EqualError(t, err, tc.msg)
		})
	}

	// Random source exhausted after the ephemeral seed: the user secret read fails.
	_, err := CreatePermanentWith(appID, appSecret, vecUserID, stream(make([]byte, 40)))
	require.ErrorContains(t, err, "create permanent identity: user secret: read random:")
}
