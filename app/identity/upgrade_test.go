package identity

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUpgradeIdentityVectors(t *testing.T) {
	tests := []struct {
		name, identity, want string
	}{
		{"alphabetical secret permanent", vecOldPermanent, vecPermanent},
		{"alphabetical secret email provisional stays email", vecOldProvisionalEmail, vecProvisionalEmail},
		{"alphabetical public permanent", vecOldPublicPermanent, vecPublicPermanent},
		{"legacy public email", vecLegacyPublicEmail, vecPublicProvisionalEmail},
		// Current identities are unchanged.
		{"secret permanent", vecPermanent, vecPermanent},
		{"public permanent", vecPublicPermanent, vecPublicPermanent},
		{"secret email provisional", vecProvisionalEmail, vecProvisionalEmail},
		{"public email provisional", vecPublicProvisionalEmail, vecPublicProvisionalEmail},
		{"secret phone provisional", vecProvisionalPhone, vecProvisionalPhone},
		{"public phone provisional", vecPublicProvisionalPhone, vecPublicProvisionalPhone},
		// identity-go's own test cases and quirks.
		{"email with value", enc(`{"target":"email","value":"value"}`),
			enc(`{"target":"hashed_email","value":"` + b64String(HashEmail("value")) + `"}`)},
		{"legacy public email, js key order", enc(`{"value":"` + vecEmail + `","public_signature_key":"` + vecEmailSigPub + `","public_encryption_key":"` + vecEmailEncPub + `","target":"email","trustchain_id":"` + vecAppID + `"}`),
			vecPublicProvisionalEmail},
		{"unknown target passes through", enc(`{"target":"foo"}`), enc(`{"target":"foo"}`)},
		{"unknown keys sort first, in original order", enc(`{"value":"v","zeta":1,"target":"user","alpha":true,"trustchain_id":"AA=="}`),
			enc(`{"zeta":1,"alpha":true,"trustchain_id":"AA==","target":"user","value":"v"}`)},
		{"private_encryption_key marks a secret email identity", enc(`{"target":"email","value":"v","private_encryption_key":null}`),
			enc(`{"target":"email","value":"v","private_encryption_key":null}`)},
		{"whitespace removed", enc("{ \"target\" : \"user\" ,\n \"value\" : \"v\" }"), enc(`{"target":"user","value":"v"}`)},
		{"numbers re-encoded as float64", enc(`{"target":"user","n":1.50,"m":1e2,"big":12345678901234567890,"neg":-0.0}`),
			enc(`{"n":1.5,"m":100,"big":12345678901234567000,"neg":-0,"target":"user"}`)},
		{"nested values keep their order", enc(`{"target":"user","x":{"b":1,"a":[{"d":null,"c":"<"}]}}`),
			enc(`{"x":{"b":1,"a":[{"d":null,"c":"\u003c"}]},"target":"user"}`)},
		{"duplicate key: last wins at last position", enc(`{"a":1,"b":2,"a":3,"target":"user"}`),
			enc(`{"b":2,"a":3,"target":"user"}`)},
		{"escaping normalised", enc(`{"target":"user","value":"\u0041\/<>&\u2028é"}`),
			enc(`{"target":"user","value":"A/\u003c\u003e\u0026\u2028é"}`)},
		{"keys are case-sensitive", enc(`{"Target":"email","target":"user"}`), enc(`{"Target":"email","target":"user"}`)},
		{"non-string target passes through (identity-go panics)", enc(`{"target":12}`), enc(`{"target":12}`)},
		{"null target passes through (identity-go panics)", enc(`{"target":null,"value":"v"}`), enc(`{"target":null,"value":"v"}`)},
		{"hashed email stays", enc(`{"target":"hashed_email","value":"v"}`), enc(`{"target":"hashed_email","value":"v"}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := UpgradeIdentity(tc.identity)
			require.NoError(t, err)
			require.Equal(t, dec(t, tc.want), dec(t, got))
			require.Equal(t, tc.want, got)

			got, err = Upgrade(tc.identity)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)

			again, err := Upgrade(got)
			require.NoError(t, err)
			require.Equal(t, got, again, "idempotent")
		})
	}
}

func TestUpgradeIdentityErrors(t *testing.T) {
	tests := []struct {
		name, identity string
		is             error
		msg            string
	}{
		{"not base64", "some identity", ErrMalformedIdentity, "illegal base64 data at input byte 4"},
		{"empty object", enc(`{}`), ErrMissingTarget, "invalid provisional identity (missing target field)"},
		{"case-variant target only", enc(`{"Target":"user"}`), ErrMissingTarget, "invalid provisional identity (missing target field)"},
		{"json null (identity-go panics)", enc(`null`), ErrMissingTarget, "invalid provisional identity (missing target field)"},
		{"email without value", enc(`{"target":"email"}`), ErrMissingValue, "unsupported identity without value"},
		{"email with non-string value (identity-go panics)", enc(`{"target":"email","value":3}`), ErrInvalidValue, "unsupported identity with a non-string value"},
		{"email with null value (identity-go panics)", enc(`{"target":"email","value":null}`), ErrInvalidValue, "unsupported identity with a non-string value"},
		{"not json", enc(`nope`), ErrMalformedIdentity, "invalid character 'o' in literal null (expecting 'u')"},
		{"json array", enc(`["target"]`), ErrMalformedIdentity, "json: cannot unmarshal array into Go value of type map[string]interface {}"},
		{"json string", enc(`"target"`), ErrMalformedIdentity, "json: cannot unmarshal string into Go value of type map[string]interface {}"},
		{"number out of range", enc(`{"target":"user","n":1e400}`), ErrMalformedIdentity, "json: cannot unmarshal number 1e400 into Go value of type float64"},
		{"trailing garbage", enc(`{"target":"user"}x`), ErrMalformedIdentity, "invalid character 'x' after top-level value"},
		{"empty", "", ErrMalformedIdentity, "unexpected end of JSON input"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := UpgradeIdentity(tc.identity)
			require.ErrorIs(t, err, tc.is)
			require.EqualError(t, err, tc.msg)

			_, err = Upgrade(tc.identity)
			require.ErrorIs(t, err, tc.is)
			require.EqualError(t, err, "upgrade identity: "+tc.msg)
		})
	}
}

// With more than 12 keys sort.Sort leaves insertion sort; the result must
// still be deterministic and canonical for the known keys.
func TestUpgradeManyUnknownKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"value":"v",`)
	for i := range 40 {
		fmt.Fprintf(&b, `"k%02d":%d,`, i, i)
	}
	b.WriteString(`"target":"user","trustchain_id":"AA=="}`)
	got, err := Upgrade(enc(b.String()))
	require.NoError(t, err)
	again, err := Upgrade(enc(b.String()))
	require.NoError(t, err)
	require.Equal(t, got, again)

	o, err := decodeObject(b64(t, got), true)
	require.NoError(t, err)
	require.Len(t, o.members, 43)
	n := len(o.members)
	require.Equal(t, []string{keyTrustchainID, keyTarget, keyValue},
		[]string{o.members[n-3].key, o.members[n-2].key, o.members[n-1].key})
}
