package external

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// Ports handed out by FreePort are chosen below the system's ephemeral port range, where the
// kernel never puts a socket of its own choosing: neither another test's listener on port 0
// nor the source port of any outgoing connection (a PostgreSQL client's, a browser's) can take
// one between FreePort's answer and the server's start. Only another FreePort could, in
// another test process, at random among thousands of ports; in this process each port is
// handed out once.
const lowestPort = 10000

var (
	portsMu sync.Mutex
	handed  = map[int]bool{}
)

// FreePort returns a loopback TCP port that is free when it returns (bound and released), for
// a server a test starts on it: an external program (PostgreSQL, MailDev), or the real binary.
// It is not reserved: a test that needs a port nothing answers on uses apptest.DeadPort.
func FreePort() (int, error) {
	hi := ephemeralLow() - 1
	portsMu.Lock()
	defer portsMu.Unlock()
	var last error
	for range 200 {
		port := lowestPort + rand.IntN(hi-lowestPort+1)
		if handed[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			last = err
			continue
		}
		l.Close()
		handed[port] = true
		return port, nil
	}
	return 0, fmt.Errorf("finding a free port between %d and %d: %w", lowestPort, hi, errors.Join(errors.New("200 tries"), last))
}

// ephemeralLow is the first port of the kernel's ephemeral range (Linux's
// ip_local_port_range; 32768, Linux's default, where it cannot be read or leaves too little
// room below it).
func ephemeralLow() int {
	raw, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(raw)); len(f) == 2 {
			if lo, err := strconv.Atoi(f[0]); err == nil && lo > lowestPort+1000 {
				return lo
			}
		}
	}
	return 32768
}
