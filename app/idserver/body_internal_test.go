package idserver

import (
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
