package records_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient/records"
)

// AppendCiphertext gives DecodeCiphertext's bytes after dst's, and leaves dst as it was on an
// error.
func TestAppendCiphertext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ enc, text string }{
		{records.EncodingBase64, "aGVsbG8="}, {records.EncodingBase64, "aGVsbG8"}, {records.EncodingBase64, "-_-_"},
		{records.EncodingHex, `\x68656c6c6f`}, {records.EncodingBase64, "not base64!"}, {records.EncodingBase64, "+/-_"},
	} {
		want, wantErr := records.DecodeCiphertext(tc.enc, []byte(tc.text))
		dst := make([]byte, 3, 8)
		copy(dst, "abc")
		got, err := records.AppendCiphertext(dst, tc.enc, []byte(tc.text))
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
	got, err := records.AppendCiphertext([]byte("x"), records.EncodingBase64, big)
	require.NoError(t, err)
	require.Len(t, got, 1+30000)
}
