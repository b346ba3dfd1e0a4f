package jsonkeys_test

import (
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
