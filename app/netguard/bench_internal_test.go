package netguard

import (
	"net"
	"testing"
	"time"
)

// instantIO is a real TCP connection (its deadlines go to the runtime's poller) whose reads
// and writes return at once, to time the deadline handling alone.
type instantIO struct{ net.Conn }

func (instantIO) Read(p []byte) (int, error)  { return len(p), nil }
func (instantIO) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkRequestDeadlines is the deadline handling of one keep-alive request as fasthttp
// drives it (idle limit, read limit, write limit) with the request's read and the answer's write.
func BenchmarkRequestDeadlines(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	go func() {
		if c, err := ln.Accept(); err == nil {
			defer c.Close()
			_, _ = c.Read(make([]byte, 1)) // until the client closes
		}
	}()
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer raw.Close()
	c := &Conn{Conn: instantIO{raw}, born: time.Now()}
	buf := make([]byte, 1)
	b.ReportAllocs()
	for b.Loop() {
		_ = c.SetReadDeadline(time.Now().Add(60 * time.Second))
		_, _ = c.Read(buf)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
		_, _ = c.Write(buf)
	}
}
