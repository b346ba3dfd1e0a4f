package identity

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// b64 decodes a standard base64 test constant.
func b64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
}

// b64String is the standard base64 of b.
func b64String(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// enc base64-encodes a JSON document literal.
func enc(doc string) string {
	return base64.StdEncoding.EncodeToString([]byte(doc))
}

// dec returns the JSON document inside a b64 identity.
func dec(t testing.TB, s string) string {
	t.Helper()
	return string(b64(t, s))
}

// vecApp returns the vector app's ID, secret and public key.
func vecApp(t testing.TB) (appID, appSecret, appPublicKey []byte) {
	t.Helper()
	return b64(t, vecAppID), b64(t, vecAppSecret), b64(t, vecAppPublicKey)
}

// vecConfig is the vector app as an identity-go Config.
func vecConfig() Config {
	return Config{AppID: vecAppID, AppSecret: vecAppSecret}
}

// stream is a deterministic random source made of the given chunks.
func stream(chunks ...[]byte) io.Reader {
	return bytes.NewReader(bytes.Join(chunks, nil))
}

// failingReader fails every read.
type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("entropy exhausted") }

// requireCanonical checks that the identity's keys are exactly keys, in
// canonical order, and that the JSON is compact.
func requireCanonical(t testing.TB, identity string, keys ...string) {
	t.Helper()
	data := b64(t, identity)
	o, err := decodeObject(data, true)
	require.NoError(t, err)
	got := make([]string, len(o.members))
	for i, m := range o.members {
		got[i] = m.key
	}
	require.Equal(t, keys, got)
	for i := 1; i < len(got); i++ {
		require.Less(t, keyRank(got[i-1]), keyRank(got[i]), "canonical order")
	}
	require.NotContains(t, string(data), " ")
	require.NotContains(t, string(data), "\n")
}

var (
	secretPermanentKeys = []string{keyTrustchainID, keyTarget, keyValue, keyDelegationSignature,
		keyEphemeralPublicSignatureKey, keyEphemeralPrivateSignatureKey, keyUserSecret}
	publicPermanentKeys   = []string{keyTrustchainID, keyTarget, keyValue}
	secretProvisionalKeys = []string{keyTrustchainID, keyTarget, keyValue, keyPublicEncryptionKey,
		keyPrivateEncryptionKey, keyPublicSignatureKey, keyPrivateSignatureKey}
	publicProvisionalKeys = []string{keyTrustchainID, keyTarget, keyValue, keyPublicEncryptionKey, keyPublicSignatureKey}
)

// newTestApp generates an app from a deterministic seed byte.
func newTestApp(t testing.TB, seed byte) (appID, appSecret []byte) {
	t.Helper()
	appID, appSecret, err := GenerateApp(bytes.NewReader(bytes.Repeat([]byte{seed}, 32)))
	require.NoError(t, err)
	return appID, appSecret
}
