package fiberguard_test

import (
	"bufio"
	"bytes"
	"net/textproto"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/httpguard/fiberguard"
)

func parse(t testing.TB, headers string) (*fasthttp.RequestHeader, bool) {
	var h fasthttp.RequestHeader
	err := h.Read(bufio.NewReader(bytes.NewBufferString("POST / HTTP/1.1\r\n" + headers + "\r\n")))
	return &h, err == nil
}

func TestFraming(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		headers string
		bad     bool
	}{
		"plain":                {"Host: a\r\nContent-Length: 3\r\n", false},
		"chunked":              {"Host: a\r\nTransfer-Encoding: chunked\r\n", false},
		"no body":              {"Host: a\r\n", false},
		"two hosts":            {"Host: a\r\nHost: b\r\n", true},
		"two hosts, any case":  {"host: a\r\nHOST: a\r\n", true},
		"length and chunked":   {"Host: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n", true},
		"chunked and length":   {"Host: a\r\nTransfer-Encoding: chunked\r\ncontent-length: 3\r\n", true},
		"two lengths":          {"Host: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n", true},
		"two encodings":        {"Host: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n", true},
		"host-like other name": {"Host: a\r\nX-Host: b\r\nHostname: c\r\n", false},
	} {
		h, ok := parse(t, tc.headers)
		require.True(t, ok, name)
		require.Equal(t, tc.bad, fiberguard.Framing(h) != "", name)
	}
}

// Whatever the header block fasthttp reads, Framing does not panic, and refuses every block in which Go's
// own MIME header reader (an independent parser) sees two Host headers or a length with an
// encoding.
func FuzzFraming(f *testing.F) {
	for _, s := range []string{"Host: a\r\n", "Host: a\r\nHost: b\r\n", "Host: a\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n",
		"Host:a\r\n", "Host : a\r\nhost: b\r\n", "Host: a\r\n\tfolded\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, headers string) {
		h, ok := parse(t, headers)
		if !ok {
			return
		}
		reason := fiberguard.Framing(h)
		mime, err := textproto.NewReader(bufio.NewReader(bytes.NewBufferString(headers + "\r\n"))).ReadMIMEHeader()
		if err != nil {
			return
		}
		if len(mime["Host"]) > 1 || (len(mime["Content-Length"]) > 0 && len(mime["Transfer-Encoding"]) > 0) {
			require.NotEmpty(t, reason, "%q", headers)
		}
	})
}
