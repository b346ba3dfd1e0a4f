package netguard

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func pipeConn(t *testing.T) (*Conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return &Conn{Conn: a, born: time.Now()}, b
}

// readErr runs one Read and returns its error, failing the test if it takes 10 s.
func readErr(t *testing.T, c net.Conn) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Read(make([]byte, 1))
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the read was not cut")
		return nil
	}
}

// While a body is read, its idle limit owns the read deadline: the server's later deadlines
// (an hour away, or none) do not lift it.
func TestBodyIdleLimitOwnsTheReadDeadline(t *testing.T) {
	t.Parallel()
	c, _ := pipeConn(t)
	StartBody(c, 200*time.Millisecond)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(time.Hour)))
	require.NoError(t, c.SetDeadline(time.Time{}))
	require.True(t, errors.Is(readErr(t, c), os.ErrDeadlineExceeded))
}

// A deadline in the past (the decrypt stream's cut) still applies under the idle limit, and
// stays: no later read refreshes it.
func TestCutStaysUnderTheIdleLimit(t *testing.T) {
	t.Parallel()
	c, _ := pipeConn(t)
	StartBody(c, time.Hour)
	require.NoError(t, c.SetDeadline(time.Now()))
	require.True(t, errors.Is(readErr(t, c), os.ErrDeadlineExceeded))
	c.read.armed.Store(-int64(time.Hour)) // as if the last refresh were long ago
	require.True(t, errors.Is(readErr(t, c), os.ErrDeadlineExceeded), "the cut is not refreshed away")
}

// Once the body is over, the server's deadlines apply again.
func TestEndBodyGivesTheDeadlineBack(t *testing.T) {
	t.Parallel()
	c, _ := pipeConn(t)
	StartBody(c, time.Hour)
	EndBody(c)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(50*time.Millisecond)))
	require.True(t, errors.Is(readErr(t, c), os.ErrDeadlineExceeded))
}

// Bytes that keep coming, each within the limit, are never cut, however long it takes.
func TestMovingBodyIsNotCut(t *testing.T) {
	t.Parallel()
	c, peer := pipeConn(t)
	StartBody(c, 400*time.Millisecond)
	go func() {
		for range 12 { // 1.2 s, three times the limit
			if _, err := peer.Write([]byte{1}); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	buf := make([]byte, 1)
	for i := range 12 {
		_, err := c.Read(buf)
		require.NoError(t, err, "byte %d", i)
	}
}
