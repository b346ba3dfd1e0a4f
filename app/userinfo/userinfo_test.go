package userinfo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A URL's user:password@ is hidden wherever the URL holds one; anything else is left as it is.
func TestRedact(t *testing.T) {
	t.Parallel()
	require.Equal(t, "postgres://h/x", Redact("postgres://h/x"))
	require.Equal(t, "a@example.com", Redact("a@example.com"))
	require.Equal(t, "http://<redacted>@h/p@q", Redact("http://u:p@w@h/p@q"))
	require.Equal(t, "postgres://<redacted>@db:5432/idv?sslmode=disable", Redact("postgres://idv:secret@db:5432/idv?sslmode=disable"))
}
