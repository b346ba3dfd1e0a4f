package records

import (
	"encoding/base64"
	"testing"

	"github.com/stretchr/testify/require"
)

// The base64 forms a database column may hold all decode; a value that is not one of them is
// refused with a reason that names no byte of it.
func TestDecodeCiphertextBase64Forms(t *testing.T) {
	raw := []byte{0xfb, 0xff, 0xbf, 0x01, 0x02, 0xfe} // '+' and '/' in standard base64
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		got, err := DecodeCiphertext(EncodingBase64, []byte(enc.EncodeToString(raw)))
		require.NoError(t, err, enc.EncodeToString(raw))
		require.Equal(t, raw, got)
	}
	std, url := base64.RawStdEncoding.EncodeToString(raw), base64.RawURLEncoding.EncodeToString(raw)
	require.Contains(t, std, "+")
	require.Contains(t, url, "-")

	_, err := DecodeCiphertext(EncodingBase64, []byte(std[:4]+url[4:]))
	require.EqualError(t, err, "the value is not base64: it mixes the standard and URL-safe alphabets")
	_, err = DecodeCiphertext(EncodingBase64, []byte(std+"==="))
	require.EqualError(t, err, "the value is not base64: too much padding")
	_, err = DecodeCiphertext(EncodingBase64, []byte("AAAA*AAA"))
	require.EqualError(t, err, "the value is not base64: bad character or length at byte 4")
	_, err = DecodeCiphertext(EncodingBase64, []byte("AAAA-A*A"))
	require.EqualError(t, err, "the value is not base64: bad character or length at byte 6")
}
