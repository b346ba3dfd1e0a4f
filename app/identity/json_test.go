package identity

import (
	"encoding/json"
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
