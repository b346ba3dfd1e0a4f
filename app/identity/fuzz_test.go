package identity

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// fuzzSeeds are the JSON documents of every vector plus edge cases.
func fuzzSeeds(f *testing.F) {
	for _, v := range []string{
		vecPermanent, vecPublicPermanent, vecProvisionalEmail, vecPublicProvisionalEmail,
		vecLegacyPublicEmail, vecProvisionalPhone, vecPublicProvisionalPhone,
		vecOldPermanent, vecOldProvisionalEmail, vecOldPublicPermanent,
	} {
		data, err := base64.StdEncoding.DecodeString(v)
		require.NoError(f, err)
		f.Add(data)
	}
	for _, doc := range []string{
		`{}`, `null`, `[]`, `"x"`, `1`, `{"target":"email"}`, `{"target":"email","value":"value"}`,
		`{"target":"foo"}`, `{"target":"phone_number"}`, `{"target":"phone_number","private_signature_key":1}`,
		`{"target":"email","value":1}`, `{"target":1}`, `{"target":null}`, `{"a":{"b":[{"c":1}]},"target":"user"}`,
		`{"target":"user","target":"email","TARGET":"phone_number"}`, `{"target":"user","n":1e400}`,
		`{"target":"user","value":"\u2028<>&\ud800"}`, "{\"target\":\"user\",\"value\":\"\xff\"}",
	} {
		f.Add([]byte(doc))
	}
}

// fuzzInputs returns the identity strings to try for one fuzz input: the
// input as b64 of the bytes, and the bytes themselves as a string.
func fuzzInputs(data []byte) []string {
	return []string{base64.StdEncoding.EncodeToString(data), string(data)}
}

// requireJSONObject checks that a successful result is b64 of a JSON object.
func requireJSONObject(t *testing.T, s string) map[string]any {
	t.Helper()
	raw, err := base64.StdEncoding.Strict().DecodeString(s)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m))
	require.NotNil(t, m)
	return m
}

func FuzzPublicIdentity(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		// The fast JSON string writer agrees with encoding/json.
		want, err := json.Marshal(string(data))
		require.NoError(t, err)
		require.Equal(t, string(want), string(appendJSONString(nil, string(data))))

		for _, in := range fuzzInputs(data) {
			got, err := PublicIdentity(in)
			requireNoEcho(t, data, err)
			compat, compatErr := GetPublicIdentity(in)
			require.Equal(t, got, compat)
			if err != nil {
				require.Error(t, compatErr)
				continue
			}
			m := requireJSONObject(t, got)
			require.Contains(t, []any{TargetUser, TargetHashedEmail, TargetHashedPhoneNumber}, m[keyTarget])
			for k := range m {
				require.NotContains(t, []string{keyPrivateEncryptionKey, keyPrivateSignatureKey,
					keyEphemeralPrivateSignatureKey, keyUserSecret}, k, "public identity leaks %s", k)
			}
			requireCanonicalOrder(t, got)
		}
	})
}

func FuzzUpgrade(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range fuzzInputs(data) {
			got, err := Upgrade(in)
			requireNoEcho(t, data, err)
			compat, _ := UpgradeIdentity(in)
			require.Equal(t, got, compat)
			if err != nil {
				continue
			}
			m := requireJSONObject(t, got)
			require.Contains(t, m, keyTarget)
			requireCanonicalOrder(t, got)
			again, err := Upgrade(got)
			require.NoError(t, err)
			if len(m) <= 12 { // beyond, sort.Sort (like identity-go) is not stable
				require.Equal(t, got, again, "idempotent")
			}
		}
	})
}

func FuzzParsePermanent(f *testing.F) {
	appID, _, appPublicKey := vecApp(f)
	fuzzParseSecret(f, func(in string) (*Permanent, error) { return ParsePermanent(in, appID, appPublicKey) },
		func(p *Permanent) ([]byte, string, []byte) { return p.AppID, TargetUser, p.UserID })
}

func FuzzParseProvisional(f *testing.F) {
	appID, _, _ := vecApp(f)
	fuzzParseSecret(f, func(in string) (*Provisional, error) { return ParseProvisional(in, appID) },
		func(p *Provisional) ([]byte, string, []byte) { return p.AppID, "hashed_" + p.Target, p.HashedValue() })
}

// fuzzParseSecret fuzzes a secret identity parser: whatever it accepts, the permissive
// PublicIdentity reads the same way (the trustchain_id, target and value that public gives),
// and parsing again the canonical form or the Upgrade of the input gives the same identity.
func fuzzParseSecret[P interface{ SecretIdentity() string }](f *testing.F, parse func(string) (P, error), public func(P) (appID []byte, target string, value []byte)) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, in := range fuzzInputs(data) {
			p, err := parse(in)
			requireNoEcho(t, data, err)
			if err != nil {
				require.Nil(t, p)
				continue
			}
			pub, err := PublicIdentity(in)
			require.NoError(t, err)
			m := requireJSONObject(t, pub)
			appID, target, value := public(p)
			require.Equal(t, base64.StdEncoding.EncodeToString(appID), m[keyTrustchainID])
			require.Equal(t, target, m[keyTarget])
			require.Equal(t, base64.StdEncoding.EncodeToString(value), m[keyValue])
			p2, err := parse(p.SecretIdentity())
			require.NoError(t, err)
			require.Equal(t, p, p2)
			up, err := Upgrade(in)
			require.NoError(t, err)
			p2, err = parse(up)
			require.NoError(t, err)
			require.Equal(t, p, p2)
		}
	})
}

// requireNoEcho checks that an error does not quote any key-like string of
// the input: a JSON string (key or value) of 20+ base64 characters.
func requireNoEcho(t *testing.T, data []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, tokErr := dec.Token()
		if tokErr != nil {
			return
		}
		s, ok := tok.(string)
		if ok && len(s) >= 20 && isBase64Alphabet(s) {
			require.NotContains(t, err.Error(), s, "error echoes input material")
		}
	}
}

func isBase64Alphabet(s string) bool {
	for _, c := range []byte(s) {
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// requireCanonicalOrder checks that the known keys of a b64 JSON object are
// in canonical order with every unknown key before them.
func requireCanonicalOrder(t *testing.T, s string) {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	o, err := decodeObject(raw, false)
	require.NoError(t, err)
	last := 0
	for _, m := range o.members {
		r := keyRank(m.key)
		require.GreaterOrEqual(t, r, last, "key %q out of order", m.key)
		last = r
	}
	// Compact: re-marshalling in the same order gives the same bytes.
	again, err := o.MarshalJSON()
	require.NoError(t, err)
	require.True(t, bytes.Equal(raw, again), "not compact: %q vs %q", raw, again)
}
