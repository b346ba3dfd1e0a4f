package verification

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCodeRejectionBound(t *testing.T) {
	t.Parallel()
	require.Equal(t, uint64(4_200_000_000), uint64(codeBound), "the largest multiple of 10^8 below 2^32")
	require.Less(t, uint64(codeBound), uint64(1<<32))
	require.Greater(t, uint64(codeBound)+codeSpace, uint64(1<<32), "no larger multiple fits")

	word := func(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"zero", word(0), "00000000"},
		{"last accepted value", word(codeBound - 1), "99999999"},
		{"reduced mod 10^8", word(123_456_789), "23456789"},
		{"bound rejected, next draw used", append(word(codeBound), word(7)...), "00000007"},
		{"max uint32 rejected", append(word(math.MaxUint32), word(codeBound-2)...), "99999998"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := newCode(bytes.NewReader(tc.in))
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	_, err := newCode(bytes.NewReader(word(codeBound)))
	require.Error(t, err, "a reader that runs dry is an error, not a biased code")
}

// TestCodeDigitsLookUniform is a sanity check of crypto/rand codes: with 20000 codes (160000
// digits), each digit count per position is ~2000 with a standard deviation of ~42; the bound of
// ±500 (12 sigmas) cannot flake, and still catches a broken generator (a constant, a modulo on a
// byte, a missing leading zero).
func TestCodeDigitsLookUniform(t *testing.T) {
	t.Parallel()
	const n = 20000
	var counts [CodeDigits][10]int
	seen := map[string]bool{}
	for range n {
		c, err := generateCode()
		require.NoError(t, err)
		require.Len(t, c, CodeDigits)
		seen[c] = true
		for i, d := range c {
			require.True(t, d >= '0' && d <= '9', "code %q", c)
			counts[i][d-'0']++
		}
	}
	for pos := range counts {
		for d, got := range counts[pos] {
			require.InDelta(t, n/10, got, 500, "digit %d at position %d", d, pos)
		}
	}
	require.Greater(t, len(seen), n-50, "codes repeat about as often as chance allows (~2 expected)")
}

func TestCodeMACBindsAppAndAddress(t *testing.T) {
	t.Parallel()
	key := bytes.Repeat([]byte{1}, 32)
	app := bytes.Repeat([]byte{2}, 32)
	base := codeMAC(key, app, "a@x.io", "12345678")
	require.Len(t, base, 32)
	require.Equal(t, base, codeMAC(key, app, "a@x.io", "12345678"))
	for name, other := range map[string][]byte{
		"code":    codeMAC(key, app, "a@x.io", "12345679"),
		"address": codeMAC(key, app, "b@x.io", "12345678"),
		"app":     codeMAC(key, bytes.Repeat([]byte{3}, 32), "a@x.io", "12345678"),
		"key":     codeMAC(bytes.Repeat([]byte{4}, 32), app, "a@x.io", "12345678"),
	} {
		require.NotEqual(t, base, other, name)
	}
}
