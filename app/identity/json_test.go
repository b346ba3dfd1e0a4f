package identity

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", "a&b<c>", `"`, `\`, "/", "\x00\x1f\x7f", "\t\n\r\b\f", "\u2028\u2029", "é", "日本",
		"\xff", "\xed\xa0\x80", "a\u0085b", "\U0001F600", "+33611223344", "brendan.eich@tanker.io",
	} {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, s)), "%q", s)
	}
}

func TestKeyRank(t *testing.T) {
	keys := canonicalKeys()
	for i, k := range keys {
		require.Equal(t, i+1, keyRank(k))
	}
	require.Equal(t, 0, keyRank("Target"))
	require.Equal(t, 0, keyRank(""))
}

func TestDocWriterNull(t *testing.T) {
	w := newDocWriter()
	w.bin(keyTrustchainID, nil)
	w.bin(keyValue, []byte{})
	require.Equal(t, enc(`{"trustchain_id":null,"value":""}`), w.b64())
}

func TestDecodeObjectStrictness(t *testing.T) {
	_, err := decodeObject([]byte(`{"a":{"b":1,"b":2}}`), true)
	require.ErrorIs(t, err, ErrMalformedIdentity)
	require.EqualError(t, err, "malformed identity: duplicate key (unknown key)")

	o, err := decodeObject([]byte(`{"a":{"b":1,"b":2}}`), false)
	require.NoError(t, err)
	v, ok := o.get("a")
	require.True(t, ok)
	inner, err := v.(*object).MarshalJSON()
	require.NoError(t, err)
	require.Equal(t, `{"b":2}`, string(inner))
}

// Every identity document idvault writes fits the writer's first buffer, so building one never
// leaves a partial copy of its private keys in a buffer it outgrew (which b64 could not wipe).
// The longest value is an email address of 254 bytes (app/address.MaxLength), escaped as JSON
// never needs for an address.
func TestIdentityDocumentsFitTheirBuffer(t *testing.T) {
	appID, appSecret, _ := vecApp(t)
	is, err := NewIssuer(appID, appSecret)
	require.NoError(t, err)
	secret, public, err := is.CreatePermanent(vecUserID)
	require.NoError(t, err)
	email := strings.Repeat("a", 254-len("@example.com")) + "@example.com"
	provSecret, provPublic, err := CreateProvisionalPair(appID, TargetEmail, email, nil)
	require.NoError(t, err)
	for _, doc := range []string{secret, public, provSecret, provPublic} {
		raw, err := base64.StdEncoding.DecodeString(doc)
		require.NoError(t, err)
		require.Less(t, len(raw), docCapacity, "%.60s", raw)
	}
}
