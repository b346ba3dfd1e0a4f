package jsonw

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "alice@example.com", `"q"\`, "<a&b>", "é\u2028\x00\x7f\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		require.NoError(t, err)
		require.Equal(t, string(want), string(AppendString(nil, s)))
		obj, err := json.Marshal(map[string]string{"k": s})
		require.NoError(t, err)
		require.Equal(t, string(obj), "{"+string(AppendField(nil, true, "k", s))+"}")
	})
}

// TestAllPlainEveryByte puts each byte value at each position of a long string: the
// eight-at-a-time test must send every byte encoding/json escapes to json.Marshal.
func TestAllPlainEveryByte(t *testing.T) {
	for b := 0; b < 256; b++ {
		for pos := 0; pos < 17; pos++ {
			s := []byte("abcdefghijklmnopq")
			s[pos] = byte(b)
			want, err := json.Marshal(string(s))
			require.NoError(t, err)
			require.Equal(t, string(want), string(AppendString(nil, string(s))), "byte %#x at %d", b, pos)
		}
	}
}
