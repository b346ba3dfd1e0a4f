package identity

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
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

// parseErrorCase is a bad identity and what parsing it must report: every sentinel in is,
// and contains in the message.
type parseErrorCase struct {
	name     string
	identity string
	is       []error
	contains string
}

// requireParseErrors parses each case's identity and requires no identity and an error that
// matches the case, starts with prefix and holds none of secrets.
func requireParseErrors[T any](t *testing.T, tests []parseErrorCase, parse func(string) (*T, error), prefix string, secrets ...string) {
	t.Helper()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := parse(tc.identity)
			require.Nil(t, p)
			require.Error(t, err)
			for _, is := range tc.is {
				require.ErrorIs(t, err, is)
			}
			require.True(t, strings.HasPrefix(err.Error(), prefix), err.Error())
			require.Contains(t, err.Error(), tc.contains)
			for _, s := range secrets {
				require.NotContains(t, err.Error(), s)
			}
		})
	}
}
