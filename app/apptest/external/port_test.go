package external

import (
	"net"
	"strconv"
	"testing"
)

// FreePort's ports lie below the ephemeral range (so that no port the kernel picks for a
// listener on port 0 or an outgoing connection can be one), are free, and are never handed out
// twice in a process.
func TestFreePortBelowTheEphemeralRange(t *testing.T) {
	low := ephemeralLow()
	seen := map[int]bool{}
	for range 50 {
		port, err := FreePort()
		if err != nil {
			t.Fatal(err)
		}
		if port < lowestPort || port >= low {
			t.Fatalf("port %d outside [%d, %d)", port, lowestPort, low)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			t.Fatalf("port %d not free: %v", port, err)
		}
		l.Close()
	}
	// A port the kernel picks is in the ephemeral range, never one FreePort could give.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if p := l.Addr().(*net.TCPAddr).Port; p < low {
		t.Fatalf("the kernel picked %d, below the ephemeral range's start %d read by ephemeralLow", p, low)
	}
}
