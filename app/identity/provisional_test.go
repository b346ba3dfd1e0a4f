package identity

import (
	"bytes"
	"crypto/ed25519"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/curve25519"
)

func TestParseProvisionalVectors(t *testing.T) {
	appID, _, _ := vecApp(t)
	tests := []struct {
		name                           string
		identity, old                  string
		target, value                  string
		encPub, encPriv, sigPub, sigPr string
		public                         string
	}{
		{"email", vecProvisionalEmail, vecOldProvisionalEmail, TargetEmail, vecEmail,
			vecEmailEncPub, vecEmailEncPriv, vecEmailSigPub, vecEmailSigPriv, vecPublicProvisionalEmail},
		{"phone", vecProvisionalPhone, "", TargetPhoneNumber, vecPhone,
			vecPhoneEncPub, vecPhoneEncPriv, vecPhoneSigPub, vecPhoneSigPriv, vecPublicProvisionalPhone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			requireCanonical(t, tc.identity, secretProvisionalKeys...)
			p, err := ParseProvisional(tc.identity, appID)
			require.NoError(t, err)
			require.Equal(t, appID, p.AppID)
			require.Equal(t, tc.target, p.Target)
			require.Equal(t, tc.value, p.Value)
			require.Equal(t, b64(t, tc.encPub), p.PublicEncryptionKey)
			require.Equal(t, b64(t, tc.encPriv), p.PrivateEncryptionKey)
			require.Equal(t, ed25519.PublicKey(b64(t, tc.sigPub)), p.PublicSignatureKey)
			require.Equal(t, ed25519.PrivateKey(b64(t, tc.sigPr)), p.PrivateSignatureKey)
			require.Equal(t, tc.public, p.PublicIdentity())
			require.Equal(t, tc.identity, p.SecretIdentity(), "re-serialised byte for byte")

			if tc.old != "" {
				old, err := ParseProvisional(tc.old, appID)
				require.NoError(t, err)
				require.Equal(t, p, old)
			}
		})
	}
}

func TestProvisionalStringRedactsSecrets(t *testing.T) {
	appID, _, _ := vecApp(t)
	p, err := ParseProvisional(vecProvisionalEmail, appID)
	require.NoError(t, err)
	for _, format := range []string{"%v", "%+v", "%#v"} {
		out := fmt.Sprintf(format, p)
		require.Contains(t, out, "redacted")
		require.NotContains(t, out, vecEmailEncPriv)
		require.NotContains(t, out, vecEmailSigPriv)
		require.NotContains(t, out, vecEmail)
	}
}

// The vectors' private encryption keys are unclamped libsodium scalars, so the
// secret documents cannot be reproduced from a seed stream; their public
// identities can, byte for byte.
func TestCreateProvisionalWithMatchesVectorPublicIdentities(t *testing.T) {
	appID, _, _ := vecApp(t)
	tests := []struct {
		name, target, value, sigPriv, encPriv, public string
	}{
		{"email", TargetEmail, vecEmail, vecEmailSigPriv, vecEmailEncPriv, vecPublicProvisionalEmail},
		{"phone", TargetPhoneNumber, vecPhone, vecPhoneSigPriv, vecPhoneEncPriv, vecPublicProvisionalPhone},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sigPriv, encPriv := b64(t, tc.sigPriv), b64(t, tc.encPriv)
			// Randomness order: signature seed (32 bytes), then encryption scalar (32 bytes).
			id, err := CreateProvisionalWith(appID, tc.target, tc.value, stream(sigPriv[:32], encPriv))
			require.NoError(t, err)
			requireCanonical(t, id, secretProvisionalKeys...)

			pub, err := PublicIdentity(id)
			require.NoError(t, err)
			require.Equal(t, tc.public, pub)

			p, err := ParseProvisional(id, appID)
			require.NoError(t, err)
			require.Equal(t, ed25519.PrivateKey(sigPriv), p.PrivateSignatureKey)
			clamped := bytes.Clone(encPriv)
			clamped[0] &= 248
			clamped[31] = clamped[31]&127 | 64
			require.Equal(t, clamped, p.PrivateEncryptionKey)

			// Same document as the vector except the clamped private scalar.
			vector := map[string]string{TargetEmail: vecProvisionalEmail, TargetPhoneNumber: vecProvisionalPhone}[tc.target]
			require.Equal(t, withField(t, vector, keyPrivateEncryptionKey, b64String(clamped)), id)
		})
	}
}

func TestCreateProvisionalEscaping(t *testing.T) {
	appID, _, _ := vecApp(t)
	tests := []struct {
		name, value, json string
	}{
		{"html", "a&b<c>@x.io", `"value":"a\u0026b\u003cc\u003e@x.io"`},
		{"quotes and backslash", `a"b\c@x.io`, `"value":"a\"b\\c@x.io"`},
		{"line separators", "a\u2028b\u2029c", `"value":"a\u2028b\u2029c"`},
		{"control characters", "a\tb\nc\x01", `"value":"a\tb\nc\u0001"`},
		{"non-ascii raw", "élodie@exämple.fr", `"value":"élodie@exämple.fr"`},
		{"invalid utf-8", "a\xffb", `"value":"a\ufffdb"`},
		{"plain", "+33611223344", `"value":"+33611223344"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			id, err := CreateProvisionalWith(appID, TargetEmail, tc.value, stream(make([]byte, 64)))
			require.NoError(t, err)
			require.Contains(t, dec(t, id), tc.json)
			p, err := ParseProvisional(id, appID)
			require.NoError(t, err)
			if tc.name != "invalid utf-8" {
				require.Equal(t, tc.value, p.Value)
			}
		})
	}
}

func TestParseProvisionalErrors(t *testing.T) {
	appID, _, _ := vecApp(t)
	otherID, _ := newTestApp(t, 5)
	other, err := CreateProvisional(otherID, TargetEmail, vecEmail)
	require.NoError(t, err)
	sigPriv := b64(t, vecEmailSigPriv)
	badSeed := bytes.Clone(sigPriv)
	badSeed[3] ^= 1

	tests := []parseErrorCase{
		{"not base64", "some identity", []error{ErrMalformedIdentity}, "illegal base64 data at input byte 4"},
		{"not json", enc("{"), []error{ErrMalformedIdentity}, "unexpected end of JSON input"},
		{"public identity", vecPublicProvisionalEmail, []error{ErrInvalidIdentity, ErrUnsupportedTarget}, `target "hashed_email"`},
		{"legacy public identity", vecLegacyPublicEmail, []error{ErrInvalidIdentity, ErrPublicIdentity}, ""},
		{"permanent identity", vecPermanent, []error{ErrInvalidIdentity, ErrUnsupportedTarget}, `target "user"`},
		{"missing target", enc(`{}`), []error{ErrInvalidIdentity}, "missing target"},
		{"wrong app", other, []error{ErrInvalidIdentity, ErrWrongApp}, ""},
		{"missing value", withoutField(t, vecProvisionalEmail, keyValue), []error{ErrInvalidIdentity}, "missing value"},
		{"non-string value", withField(t, vecProvisionalEmail, keyValue, true), []error{ErrMalformedIdentity}, "value is not a string"},
		{"missing private signature key", withoutField(t, vecProvisionalEmail, keyPrivateSignatureKey), []error{ErrInvalidIdentity, ErrPublicIdentity}, ""},
		{"short encryption key", withField(t, vecProvisionalEmail, keyPublicEncryptionKey, "AAAA"), []error{ErrInvalidIdentity}, "public_encryption_key has 3 bytes, want 32"},
		{"short signature key", withField(t, vecProvisionalEmail, keyPrivateSignatureKey, vecEmailSigPub), []error{ErrInvalidIdentity}, "private_signature_key has 32 bytes, want 64"},
		{"encryption key mismatch", withField(t, vecProvisionalEmail, keyPrivateEncryptionKey, vecPhoneEncPriv), []error{ErrInvalidIdentity, ErrKeyMismatch}, "encryption key pair"},
		{"tampered public encryption key", withField(t, vecProvisionalEmail, keyPublicEncryptionKey, flipped(t, vecEmailEncPub, 0)), []error{ErrInvalidIdentity, ErrKeyMismatch}, "encryption key pair"},
		{"signature tail mismatch", withField(t, vecProvisionalEmail, keyPublicSignatureKey, vecPhoneSigPub), []error{ErrInvalidIdentity, ErrKeyMismatch}, "signature key pair"},
		{"signature seed mismatch", withField(t, vecProvisionalEmail, keyPrivateSignatureKey, b64String(badSeed)), []error{ErrInvalidIdentity, ErrKeyMismatch}, "signature key pair"},
		{"duplicate key", enc(strings.Replace(dec(t, vecProvisionalEmail), `"target":"email"`, `"target":"email","value":"x"`, 1)), []error{ErrMalformedIdentity}, `duplicate key "value"`},
		{"case variant key", enc(strings.Replace(dec(t, vecProvisionalEmail), `"target":"email"`, `"target":"email","Target":"phone_number"`, 1)), []error{ErrMalformedIdentity}, "only by case"},
	}
	requireParseErrors(t, tests, func(s string) (*Provisional, error) { return ParseProvisional(s, appID) },
		"parse provisional identity: ", vecEmailEncPriv, vecEmailSigPriv)

	_, err = ParseProvisional(vecProvisionalEmail, appID[:3])
	require.ErrorIs(t, err, ErrInvalidAppID)
}

func TestProvisionalRoundTrip(t *testing.T) {
	appID, _ := newTestApp(t, 11)
	for _, tc := range []struct{ target, value, hashedTarget string }{
		{TargetEmail, "alice@example.com", TargetHashedEmail},
		{TargetPhoneNumber, "+15555550100", TargetHashedPhoneNumber},
		{TargetEmail, "", TargetHashedEmail},
	} {
		t.Run(tc.target+"/"+tc.value, func(t *testing.T) {
			id, err := CreateProvisional(appID, tc.target, tc.value)
			require.NoError(t, err)
			requireCanonical(t, id, secretProvisionalKeys...)

			p, err := ParseProvisional(id, appID)
			require.NoError(t, err)
			require.Equal(t, tc.target, p.Target)
			require.Equal(t, tc.value, p.Value)
			require.Equal(t, byte(0), p.PrivateEncryptionKey[0]&7, "clamped")
			require.Equal(t, byte(64), p.PrivateEncryptionKey[31]&0xc0, "clamped")
			derived, err := curve25519.X25519(p.PrivateEncryptionKey, curve25519.Basepoint)
			require.NoError(t, err)
			require.Equal(t, p.PublicEncryptionKey, derived)

			pub, err := PublicIdentity(id)
			require.NoError(t, err)
			require.Equal(t, p.PublicIdentity(), pub)
			requireCanonical(t, pub, publicProvisionalKeys...)
			require.Contains(t, dec(t, pub), `"target":"`+tc.hashedTarget+`"`)
			require.NotContains(t, dec(t, pub), "private")

			up, err := Upgrade(id)
			require.NoError(t, err)
			require.Equal(t, id, up, "secret provisional identities are already current")

			_, err = ParseProvisional(id, b64(t, vecAppID))
			require.ErrorIs(t, err, ErrWrongApp)
		})
	}
}

func TestCreateProvisionalErrors(t *testing.T) {
	appID, _, _ := vecApp(t)
	tests := []struct {
		name   string
		appID  []byte
		target string
		is     error
		msg    string
	}{
		{"bad target", appID, "user", ErrUnsupportedProvisionalTarget, "create provisional identity: unsupported provisional identity target"},
		{"hashed target", appID, TargetHashedEmail, ErrUnsupportedProvisionalTarget, "create provisional identity: unsupported provisional identity target"},
		{"empty target", appID, "", ErrUnsupportedProvisionalTarget, "create provisional identity: unsupported provisional identity target"},
		{"case", appID, "EMAIL", ErrUnsupportedProvisionalTarget, "create provisional identity: unsupported provisional identity target"},
		{"short app id", appID[:1], TargetEmail, ErrInvalidAppID, "create provisional identity: wrong byte size for AppID: 1, should be 32"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := CreateProvisional(tc.appID, tc.target, vecEmail)
			require.ErrorIs(t, err, tc.is)
			require.EqualError(t, err, tc.msg)
		})
	}

	_, err := CreateProvisionalWith(appID, TargetEmail, vecEmail, failingReader{})
	require.EqualError(t, err, "create provisional identity: signature key: read random: entropy exhausted")
	_, err = CreateProvisionalWith(appID, TargetEmail, vecEmail, stream(make([]byte, 32)))
	require.ErrorContains(t, err, "create provisional identity: encryption key: read random:")
}
