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
