package jsonkeys_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/jsonkeys"
)

// A misspelt field is named; anything that may be a secret is not.
func TestName(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"test_mode", "identitys", "Test", "registered_users_only"} {
		require.Equal(t, `"`+key+`"`, jsonkeys.Name(key))
	}
	for _, key := range []string{"", "12345678", "od6dQj4yvmohFVm6W3rlCG8Sy19sKkz9sdsO7lLU55k",
		"eyJ0cnVzdGNoYWluX2lkIjoi", "abcdefabcdefabcdefabcdefab", "a\"b", "é"} {
		require.Equal(t, jsonkeys.NotShown, jsonkeys.Name(key), key)
	}
}

func TestUnknownField(t *testing.T) {
	t.Parallel()
	decode := func(body string) error {
		var v struct{ Name string }
		dec := json.NewDecoder(strings.NewReader(body))
		dec.DisallowUnknownFields()
		return dec.Decode(&v)
	}
	name, ok := jsonkeys.UnknownField(decode(`{"test_mode": true}`))
	require.True(t, ok)
	require.Equal(t, `"test_mode"`, name)
	name, ok = jsonkeys.UnknownField(decode(`{"eyJ0cnVzdGNoYWluX2lkIjoi": 1}`))
	require.True(t, ok)
	require.Equal(t, jsonkeys.NotShown, name, "a key that may be a secret is not quoted")
	_, ok = jsonkeys.UnknownField(decode(`{"name": 5}`))
	require.False(t, ok, "a type error is not an unknown field")
}
