package httpguard

import (
	"bufio"
	"bytes"
	"io"
	"net/http/httputil"
	"net/textproto"
	"testing"
)

// netHTTPChunkedEnd is where net/http's chunked body reader, then its trailer reader, ends on
// data, or false when they fail.
func netHTTPChunkedEnd(data []byte) (int, bool) {
	src := bytes.NewReader(data)
	br := bufio.NewReader(src)
	if _, err := io.Copy(io.Discard, httputil.NewChunkedReader(br)); err != nil {
		return 0, false
	}
	if buf, _ := br.Peek(2); bytes.Equal(buf, []byte("\r\n")) {
		_, _ = br.Discard(2)
	} else if len(buf) < 2 {
		return 0, false
	} else if _, err := textproto.NewReader(br).ReadMIMEHeader(); err != nil {
		return 0, false
	}
	return len(data) - src.Len() - br.Buffered(), true
}

// ownChunkedEnd is where bodyFrame finds the end of a chunked body in data, fed step bytes at
// a time, or false when it does not find one.
func ownChunkedEnd(data []byte, step int) (int, bool) {
	b := bodyFrame{chunked: true}
	end := 0
	for end < len(data) && !b.done() {
		n, err := b.advance(data[end:min(len(data), end+step)])
		end += n
		if err != nil {
			return 0, false
		}
	}
	return end, b.done()
}

// Heads finds the end of a chunked body where net/http does, whatever the pieces the bytes
// come in: a request smuggled in a body is never taken for a head, and no head is taken for a
// body. Where net/http refuses a framing, Heads may take it (the connection then closes).
func FuzzChunkedFraming(f *testing.F) {
	for _, seed := range []string{
		"5\r\nhello\r\n0\r\n\r\n",
		"5;ext=1\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n",
		"3  \r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nX-Trailer: 1\r\n\r\n",
		"0\r\n\r\n",
		"5\nhello\r\n0\r\n\r\n",
		"5\r\nhello\n0\r\n\r\n",
		"ffffffffffffffffff\r\n",
		"-5\r\nhello\r\n0\r\n\r\n",
		"+5\r\nhello\r\n0\r\n\r\n",
		"0\r\nA: b\nC: d\n\n",
		"1\r\nx\r\n0\r\n\r\n0\r\n\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		want, ok := netHTTPChunkedEnd(data)
		for _, step := range []int{1, 3, len(data) + 1} {
			got, done := ownChunkedEnd(data, step)
			if ok && (!done || got != want) {
				t.Fatalf("step %d: net/http ends the body at %d, Heads at %d (done %v): %q", step, want, got, done, data)
			}
		}
	})
}
