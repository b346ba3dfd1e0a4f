package netguard_test

import (
	"bufio"
	"errors"
	"net"
	"net/http"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/netguard"
)

// failingListener fails its first accepts with EMFILE (a full file table), then accepts.
type failingListener struct {
	net.Listener
	mu    sync.Mutex
	fails int
}

func (l *failingListener) Accept() (net.Conn, error) {
	l.mu.Lock()
	if l.fails > 0 {
		l.fails--
		l.mu.Unlock()
		return nil, &net.OpError{Op: "accept", Net: "tcp", Err: syscall.EMFILE}
	}
	l.mu.Unlock()
	return l.Listener.Accept()
}

func loopback(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	return ln
}

// Accept errors are retried, never returned: fasthttp would end Serve on one.
func TestAcceptErrorsAreRetried(t *testing.T) {
	t.Parallel()
	inner := loopback(t)
	l := netguard.Listen(&failingListener{Listener: inner, fails: 5}, netguard.Config{})
	c, err := net.Dial("tcp", inner.Addr().String())
	require.NoError(t, err)
	defer c.Close()
	sc, err := l.Accept()
	require.NoError(t, err, "five EMFILE errors, then the connection")
	sc.Close()
	require.NoError(t, l.Close())
	_, err = l.Accept()
	require.True(t, errors.Is(err, net.ErrClosed), "a closed listener ends Accept: %v", err)
}

// Connections over max_connections or max_connections_per_ip get a 503 and are closed at once;
// closing one makes room.
func TestConnectionCaps(t *testing.T) {
	t.Parallel()
	for name, cfg := range map[string]netguard.Config{
		"total":  {MaxConns: 2, MaxConnsPerIP: 100},
		"per ip": {MaxConns: 100, MaxConnsPerIP: 2},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := netguard.Listen(loopback(t), cfg)
			accepted := make(chan net.Conn, 10)
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					accepted <- c
				}
			}()
			dial := func() net.Conn {
				c, err := net.Dial("tcp", l.Addr().String())
				require.NoError(t, err)
				t.Cleanup(func() { c.Close() })
				return c
			}
			dial()
			dial()
			held := []net.Conn{<-accepted, <-accepted}
			over := dial()
			require.NoError(t, over.SetReadDeadline(time.Now().Add(10*time.Second)))
			resp, err := http.ReadResponse(bufio.NewReader(over), nil)
			require.NoError(t, err, "the third connection is answered")
			require.Equal(t, 503, resp.StatusCode)
			require.Equal(t, 2, l.Open())
			held[0].Close()
			require.Equal(t, 1, l.Open())
			dial()
			select {
			case c := <-accepted:
				c.Close()
			case <-time.After(10 * time.Second):
				t.Fatal("a connection is accepted once one closed")
			}
			held[1].Close()
		})
	}
}

// Exempt addresses (trusted proxies) are not capped per address.
func TestExemptAddressesHaveNoPerIPCap(t *testing.T) {
	t.Parallel()
	l := netguard.Listen(loopback(t), netguard.Config{MaxConnsPerIP: 1, Exempt: func(net.IP) bool { return true }})
	go func() {
		for {
			if _, err := l.Accept(); err != nil {
				return
			}
		}
	}()
	for range 3 {
		c, err := net.Dial("tcp", l.Addr().String())
		require.NoError(t, err)
		defer c.Close()
	}
	require.Eventually(t, func() bool { return l.Open() == 3 }, 10*time.Second, 10*time.Millisecond)
}

func TestFitConns(t *testing.T) {
	t.Parallel()
	require.Equal(t, 512, netguard.FitConns(512, 1<<20), "fits")
	require.Equal(t, 896, netguard.FitConns(4096, 1024), "a quarter kept back, at most 128")
	require.Equal(t, 48, netguard.FitConns(4096, 64))
}
