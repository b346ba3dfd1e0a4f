package loopback_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/loopback"
)

// The cases where idvault's three former checks (config.IsLoopback, exitserver.IsLoopback and
// mail.IsLoopbackHost) disagreed, and the plain ones all three must keep.
func TestIsHost(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		// Names: case-insensitive, the trailing dot of a fully qualified name allowed.
		"localhost":  true,
		"LOCALHOST":  true,
		"LocalHost":  true,
		"localhost.": true,
		"LOCALHOST.": true,
		// IP literals, bare and bracketed, IPv4-mapped, with a zone.
		"127.0.0.1":          true,
		"127.255.255.254":    true,
		"::1":                true,
		"0:0:0:0:0:0:0:1":    true,
		"::ffff:127.0.0.1":   true,
		"[::ffff:127.0.0.1]": true,
		"[::1]":              true,
		"[127.0.0.1]":        true,
		"::1%lo":             true,
		"[::1%lo]":           true,
		// Not loopback.
		"":                      false,
		"0.0.0.0":               false,
		"::":                    false,
		"[::]":                  false,
		"128.0.0.1":             false,
		"10.0.0.5":              false,
		"::2":                   false,
		"::ffff:10.0.0.5":       false,
		"fe80::1%lo":            false,
		"example.com":           false,
		"localhost.example.com": false,
		"a.localhost":           false,
		"localhost..":           false,
		".localhost":            false,
		" localhost":            false,
		"localhost ":            false,
		"[localhost]":           false,
		"[::1":                  false,
		"::1]":                  false,
		"[[::1]]":               false,
		"127.1":                 false,
		"127.0.0.1.":            false,
	}
	for host, want := range cases {
		require.Equal(t, want, loopback.IsHost(host), "IsHost(%q)", host)
	}
}
