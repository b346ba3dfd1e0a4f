package httpguard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/httpguard"
)

// A header block with two Hosts, two lengths, two encodings, or a length with an encoding is
// refused, whatever the case of the names; others pass.
func TestFramingOf(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		headers string
		want    string
	}{
		"plain":                {"Host: a\r\nContent-Length: 3\r\n", ""},
		"chunked":              {"Host: a\r\nTransfer-Encoding: chunked\r\n", ""},
		"no body":              {"Host: a\r\n", ""},
		"bare line feeds":      {"Host: a\nContent-Length: 3", ""},
		"two hosts":            {"Host: a\r\nHost: b\r\n", "the request has more than one Host header"},
		"two hosts, any case":  {"host: a\r\nHOST: a\r\n", "the request has more than one Host header"},
		"length and chunked":   {"Host: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n", "the request has both Content-Length and Transfer-Encoding"},
		"chunked and length":   {"Host: a\r\nTransfer-Encoding: chunked\r\ncontent-length: 3\r\n", "the request has both Content-Length and Transfer-Encoding"},
		"two lengths":          {"Host: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n", "the request has more than one Content-Length header"},
		"two encodings":        {"Host: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", "the request has more than one Transfer-Encoding header"},
		"host-like other name": {"Host: a\r\nX-Host: b\r\nHostname: c\r\n", ""},
	} {
		require.Equal(t, tc.want, httpguard.FramingOf([]byte(tc.headers)), name)
	}
}
