package idserver

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast reading of {"email":"..."} agrees with the general JSON reading on every body it
// accepts, and accepts the body clients send.
func FuzzPlainEmailBody(f *testing.F) {
	for _, seed := range []string{
		`{"email":"alice@example.com"}`, ` { "email" : "a@b.io" } `, `{"email":"a\"b@x.io"}`,
		`{"email":"a@x.io","email":"b@x.io"}`, `{"email":"a@x.io"}x`, `{"email":"   "}`, `{"Email":"a@x.io"}`,
		"{\"email\":\"\x7f@x.io\"}", `{"email":"é@x.io"}`, `{"email":"a@x.io"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, ok := plainEmailBody(body)
		if !ok {
			return
		}
		general, err := emailField(body)
		require.NoError(t, err, "the general reading refuses %q", body)
		require.Equal(t, general, fast)
	})
}

func TestPlainEmailBodyTakesTheCommonBody(t *testing.T) {
	for _, body := range []string{`{"email":"alice@example.com"}`, "{\n  \"email\": \"alice@example.com\"\n}\n"} {
		got, ok := plainEmailBody([]byte(body))
		require.True(t, ok, body)
		require.Equal(t, "alice@example.com", got)
	}
}

// The hand-written POST /identity answer is what encoding/json writes.
func FuzzIdentityResponseJSON(f *testing.F) {
	f.Add("0b6a1c52-3a5c-4d0e-9d8e-3f2c1f0e9a11", "eyJ0cnVzdGNoYWluX2lkIjoi", "", true)
	f.Add("", "<&>", "\"\\\x00é", false)
	f.Fuzz(func(t *testing.T, id, service, provisional string, registered bool) {
		r := IdentityResponse{ID: id, ServiceIdentity: service, TankerIdentity: service, ProvisionalIdentity: provisional, Registered: registered}
		want, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, string(want), string(r.appendJSON(nil)))
		require.Equal(t, "prefix"+string(want), string(r.appendJSON([]byte("prefix"))), "appended after other bytes")
		r.TankerIdentity = provisional // not the service identity: written on its own
		want, err = json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, string(want), string(r.appendJSON(nil)))
	})
}

// The hand-written POST /public_identity answer is what encoding/json writes.
func FuzzPublicIdentityResponseJSON(f *testing.F) {
	f.Add("eyJ0cnVzdGNoYWluX2lkIjoidHBveHlOemgwaFU5RzJpOWFnTXZIeXlkK3BPNnpHQ2pPOUJmaHJDTGpkND0ifQ==")
	f.Add("<&>\"\\\x00é\u2028")
	f.Fuzz(func(t *testing.T, pub string) {
		r := PublicIdentityResponse{PublicIdentity: pub}
		want, err := json.Marshal(r)
		require.NoError(t, err)
		require.Equal(t, string(want), string(r.appendJSON(nil)))
	})
}
