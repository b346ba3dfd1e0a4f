package jsonkeys

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestRepeated(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw      string
		fold     bool
		key      string
		repeated bool
	}{
		{`{"a": 1, "b": 2}`, true, "", false},
		{`{"a": 1, "a": 2}`, false, "a", true},
		{`{"Test": true, "test": false}`, true, "test", true},
		{`{"Test": true, "test": false}`, false, "", false},
		{`{"teſt": true, "test": false}`, true, "test", true}, // long s: encoding/json's "test"
		{`{"Key": 1, "key": 2}`, true, "key", true},           // Kelvin sign: encoding/json's "k"
		{`{"tést": 1, "TÉST": 2}`, true, "TÉST", true},
		{`{"ıd": 1, "id": 2}`, true, "", false},      // dotless i is no "i" to encoding/json
		{`{"a": {"b": 1, "b": 2}}`, true, "", false}, // nested objects are their own decoder's
		{`{"a": [1, {"a": 2}], "c": 3, "c": 4}`, false, "c", true},
		{`[1, 2]`, true, "", false},
		{`{"a": `, true, "", false},
		{``, true, "", false},
	} {
		key, repeated := Repeated([]byte(c.raw), c.fold)
		require.Equal(t, c.repeated, repeated, c.raw)
		require.Equal(t, c.key, key, c.raw)
	}
}

func TestRepeatedOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		raw      string
		fold     bool
		key      string
		repeated bool
	}{
		{`{"x": 1, "x": 2, "email": "a"}`, true, "", false}, // unknown keys may repeat
		{`{"x": 1, "x": 2, "email": "a", "email": "b"}`, false, "email", true},
		{`{"email": "a", "Email": "b"}`, true, "Email", true},
		{`{"email": "a", "Email": "b"}`, false, "", false},
		{`{"app_id": "a", "APP_ID": "b"}`, true, "APP_ID", true},
		{`{"app_id": "a", "app_İd": "b"}`, true, "", false},
		{`{"a": {"email": 1, "email": 2}}`, true, "", false},
	} {
		key, repeated := RepeatedOf([]byte(c.raw), c.fold, "email", "app_id")
		require.Equal(t, c.repeated, repeated, c.raw)
		require.Equal(t, c.key, key, c.raw)
	}
}

// Fold agrees with encoding/json: a key decodes into a field exactly when the two fold alike,
// so a repeat that encoding/json would let overwrite is always seen.
func FuzzFoldMatchesEncodingJSON(f *testing.F) {
	for _, k := range []string{"test", "TEST", "te\u017ft", "\u212aelvin", "t\u00e9st", "\u0131d", "legacy_errors", "x"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		raw, err := json.Marshal(map[string]int{key: 1})
		require.NoError(t, err)
		var dec map[string]int
		require.NoError(t, json.Unmarshal(raw, &dec))
		for k := range dec { // the key as the decoder reads it (invalid UTF-8 replaced)
			key = k
		}
		for _, field := range []string{"test", "key", "legacy_errors", "email", "t\u00e9st"} {
			var v struct {
				Test  int `json:"test"`
				Key   int `json:"key"`
				LE    int `json:"legacy_errors"`
				Email int `json:"email"`
				Tes   int `json:"t\u00e9st"`
			}
			require.NoError(t, json.Unmarshal(raw, &v))
			got := map[string]int{"test": v.Test, "key": v.Key, "legacy_errors": v.LE, "email": v.Email, "t\u00e9st": v.Tes}[field]
			require.Equal(t, got == 1, fold(key) == fold(field), "key %q, field %q", key, field)
		}
	})
}
