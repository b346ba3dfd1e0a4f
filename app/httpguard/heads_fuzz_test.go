package httpguard

import (
	"bytes"
	"net"
	"testing"
	"time"
)

// onceConn reads data, then io.EOF.
type onceConn struct {
	net.Conn
	r *bytes.Reader
}

func (c *onceConn) Read(p []byte) (int, error)      { return c.r.Read(p) }
func (c *onceConn) SetReadDeadline(time.Time) error { return nil }

// Whatever a client sends, Heads hands on only bytes it was sent, in order (empty lines before
// a request line aside), and never more than them.
func FuzzHeads(f *testing.F) {
	for _, seed := range []string{
		"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
		"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n",
		"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n\r\nGET / HTTP/1.0\n\n",
		"POST / HTTP/1.0\r\nTransfer-Encoding: gzip\r\n\r\n",
		"\r\n\nGET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
	} {
		f.Add([]byte(seed), uint8(7))
	}
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		c := &headConn{Conn: &onceConn{r: bytes.NewReader(data)}, cfg: &HeadConfig{MaxBytes: 256}, buf: make([]byte, 0, 257)}
		var got []byte
		p := make([]byte, int(step)%64+1)
		for range 10 * (len(data) + 1) {
			n, err := c.Read(p)
			got = append(got, p[:n]...)
			if err != nil {
				break
			}
		}
		if len(got) > len(data) {
			t.Fatalf("handed on %d bytes of %d", len(got), len(data))
		}
		if !isSubsequence(got, data) {
			t.Fatalf("handed on bytes it was not sent: %q of %q", got, data)
		}
	})
}

// isSubsequence reports whether a's bytes appear in b in order.
func isSubsequence(a, b []byte) bool {
	for _, x := range b {
		if len(a) > 0 && a[0] == x {
			a = a[1:]
		}
	}
	return len(a) == 0
}
