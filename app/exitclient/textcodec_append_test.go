package exitclient_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
)

// AppendCiphertext gives DecodeCiphertext's bytes after dst's, and leaves dst as it was on an
// error.
func TestAppendCiphertext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ enc, text string }{
		{exitclient.EncodingBase64, "aGVsbG8="}, {exitclient.EncodingBase64, "aGVsbG8"}, {exitclient.EncodingBase64, "-_-_"},
		{exitclient.EncodingHex, `\x68656c6c6f`}, {exitclient.EncodingBase64, "not base64!"}, {exitclient.EncodingBase64, "+/-_"},
	} {
		want, wantErr := exitclient.DecodeCiphertext(tc.enc, []byte(tc.text))
		dst := make([]byte, 3, 8)
		copy(dst, "abc")
		got, err := exitclient.AppendCiphertext(dst, tc.enc, []byte(tc.text))
		if wantErr != nil {
			require.EqualError(t, err, wantErr.Error(), tc.text)
			require.Equal(t, "abc", string(got), tc.text)
			continue
		}
		require.NoError(t, err, tc.text)
		require.Equal(t, "abc"+string(want), string(got), tc.text)
	}
	big := make([]byte, 40000)
	for i := range big {
		big[i] = 'A'
	}
	got, err := exitclient.AppendCiphertext([]byte("x"), exitclient.EncodingBase64, big)
	require.NoError(t, err)
	require.Len(t, got, 1+30000)
}
