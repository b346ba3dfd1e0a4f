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
