package identity

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// b64 of H_32("") — what {"target":"email"} hashes its missing value to.
const hashOfEmptyString = "DldRwCblQ7Loqy6wYJnaodHl30d3j3eH+qtFzfEv46g="

func TestGetPublicIdentityVectors(t *testing.T) {
	tests := []struct {
		name, identity, want string
	}{
		{"secret permanent", vecPermanent, vecPublicPermanent},
		{"public permanent", vecPublicPermanent, vecPublicPermanent},
		{"alphabetical public permanent", vecOldPublicPermanent, vecPublicPermanent},
		{"alphabetical secret permanent", vecOldPermanent, vecPublicPermanent},
		{"secret email provisional", vecProvisionalEmail, vecPublicProvisionalEmail},
		{"alphabetical secret email provisional", vecOldProvisionalEmail, vecPublicProvisionalEmail},
		{"legacy public email", vecLegacyPublicEmail, vecPublicProvisionalEmail},
		{"secret phone provisional", vecProvisionalPhone, vecPublicProvisionalPhone},
		{"quirk: bare email target", enc(`{"target":"email"}`),
			enc(`{"trustchain_id":null,"target":"hashed_email","value":"` + hashOfEmptyString + `"}`)},
		{"quirk: empty trustchain id", enc(`{"trustchain_id":"","target":"user","value":"v"}`),
			enc(`{"trustchain_id":"","target":"user","value":"v"}`)},
		{"quirk: keys matched case-insensitively", enc(`{"TARGET":"user","Value":"v","Trustchain_Id":"AAAA"}`),
			enc(`{"trustchain_id":"AAAA","target":"user","value":"v"}`)},
		{"quirk: last duplicate wins", enc(`{"target":"email","target":"user","value":"v"}`),
			enc(`{"trustchain_id":null,"target":"user","value":"v"}`)},
		{"quirk: public keys of a user identity are copied", enc(`{"target":"user","value":"v","public_signature_key":"AQ==","public_encryption_key":""}`),
			enc(`{"trustchain_id":null,"target":"user","value":"v","public_signature_key":"AQ=="}`)},
		{"quirk: unknown keys dropped", enc(`{"x":1,"target":"user","value":"v","user_secret":"AA=="}`),
			enc(`{"trustchain_id":null,"target":"user","value":"v"}`)},
		{"quirk: lenient phone salt", enc(`{"target":"phone_number","value":"+1","private_signature_key":"` + vecPhoneSigPriv[:8] + `!"}`),
			enc(`{"trustchain_id":null,"target":"hashed_phone_number","value":"` + b64String(HashPhoneNumber(b64(t, vecPhoneSigPriv[:8]), "+1")) + `"}`)},
		{"html escaping of values", enc(`{"target":"user","value":"<&>"}`),
			enc(`{"trustchain_id":null,"target":"user","value":"\u003c\u0026\u003e"}`)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := GetPublicIdentity(tc.identity)
			require.NoError(t, err)
			require.Equal(t, dec(t, tc.want), dec(t, got))
			require.Equal(t, tc.want, got)

			got, err = PublicIdentity(tc.identity)
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestGetPublicIdentityErrors(t *testing.T) {
	tests := []struct {
		name, identity string
		is             error
		msg            string
	}{
		{"bad target", enc(`{"target":"____not_a_good_target____"}`), ErrUnsupportedTarget, "unsupported identity target"},
		{"phone without private key", enc(`{"target":"phone_number"}`), ErrInvalidIdentity, "invalid tanker identity"},
		{"phone with case-variant private key", enc(`{"target":"phone_number","Private_Signature_Key":"AA=="}`), ErrInvalidIdentity, "invalid tanker identity"},
		{"phone with non-string private key (identity-go panics)", enc(`{"target":"phone_number","private_signature_key":12}`), ErrInvalidIdentity, "invalid tanker identity"},
		{"phone with null private key (identity-go panics)", enc(`{"target":"phone_number","private_signature_key":null}`), ErrInvalidIdentity, "invalid tanker identity"},
		{"not base64", "some identity", ErrMalformedIdentity, "illegal base64 data at input byte 4"},
		{"unpadded", strings.TrimRight(enc(`{"target":"user"}`), "="), ErrMalformedIdentity, "illegal base64 data at input byte 20"},
		{"not json", enc("hello"), ErrMalformedIdentity, "invalid character 'h' looking for beginning of value"},
		{"truncated json", enc(`{"target":"user"`), ErrMalformedIdentity, "unexpected end of JSON input"},
		{"json array", enc(`[]`), ErrMalformedIdentity, "json: cannot unmarshal array into Go value of type identity.anyPublicIdentity"},
		{"non-string target", enc(`{"target":1}`), ErrMalformedIdentity, "json: cannot unmarshal number into Go struct field anyPublicIdentity.target of type string"},
		{"bad base64 trustchain id", enc(`{"target":"user","trustchain_id":"%%%"}`), ErrMalformedIdentity, "illegal base64 data at input byte 0"},
		{"hashed email", vecPublicProvisionalEmail, ErrUnsupportedTarget, "unsupported identity target"},
		{"hashed phone", vecPublicProvisionalPhone, ErrUnsupportedTarget, "unsupported identity target"},
		{"missing target", enc(`{"value":"v"}`), ErrUnsupportedTarget, "unsupported identity target"},
		{"json null", enc(`null`), ErrUnsupportedTarget, "unsupported identity target"},
		{"empty string", "", ErrUnsupportedTarget, "unexpected end of JSON input"},
		{"target is case-sensitive", enc(`{"target":"User"}`), ErrUnsupportedTarget, "unsupported identity target"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := GetPublicIdentity(tc.identity)
			require.EqualError(t, err, tc.msg)
			if tc.name != "empty string" {
				require.ErrorIs(t, err, tc.is)
			}

			_, err = PublicIdentity(tc.identity)
			require.EqualError(t, err, "public identity: "+tc.msg)
		})
	}
}
