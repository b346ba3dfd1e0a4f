package jsonkeys

import (
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
		{`{"a": {"email": 1, "email": 2}}`, true, "", false},
	} {
		key, repeated := RepeatedOf([]byte(c.raw), c.fold, "email", "app_id")
		require.Equal(t, c.repeated, repeated, c.raw)
		require.Equal(t, c.key, key, c.raw)
	}
}
