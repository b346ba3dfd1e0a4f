package httpguard

import (
	"net"
	"testing"
	"time"
)

// fakeConn is a connection that reads data over and over, at once.
type fakeConn struct {
	net.Conn
	data []byte
	off  int
}

func (f *fakeConn) Read(p []byte) (int, error) {
	if f.off == len(f.data) {
		f.off = 0
	}
	n := copy(p, f.data[f.off:])
	f.off += n
	return n, nil
}
func (f *fakeConn) SetReadDeadline(time.Time) error { return nil }

// BenchmarkHeadPath is what Heads adds to one keep-alive request of a 1 KiB body: its head
// read, checked and handed on, then its body followed to its end.
func BenchmarkHeadPath(b *testing.B) {
	req := []byte("POST /v1/decrypt HTTP/1.1\r\nHost: 127.0.0.1:8000\r\nUser-Agent: Go-http-client/1.1\r\nContent-Length: 1100\r\nContent-Type: application/octet-stream\r\nAccept-Encoding: gzip\r\n\r\n")
	body := make([]byte, 1100)
	fc := &fakeConn{data: append(req, body...)}
	c := &headConn{Conn: fc, cfg: &HeadConfig{MaxBytes: 4096, Timeout: time.Second}, buf: make([]byte, 0, 4097)}
	p := make([]byte, 4096)
	b.ReportAllocs()
	for b.Loop() {
		total := 0
		for total < len(fc.data) {
			n, err := c.Read(p)
			if err != nil {
				b.Fatal(err)
			}
			total += n
		}
	}
}
