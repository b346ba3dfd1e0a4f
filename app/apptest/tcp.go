package apptest

import (
	"net"
	"testing"
)

// ServeTCP accepts connections on a loopback port until tb ends, hands each to handle in a
// goroutine of its own (handle closes it), and returns the address: a test's stand-in server
// or proxy at the TCP level.
func ServeTCP(tb testing.TB, handle func(net.Conn)) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln.Addr().String()
}

// ServeLoopback runs serve on a free loopback port (a server's own Serve, as the binary runs
// it: netguard's listener and idle limits, or a fiber app's Listener), calls stop when tb ends,
// and returns the address (host:port).
func ServeLoopback(tb testing.TB, serve func(net.Listener) error, stop func() error) string {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	go func() { _ = serve(ln) }()
	tb.Cleanup(func() { _ = stop() })
	return ln.Addr().String()
}
