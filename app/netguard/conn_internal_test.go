package netguard

import (
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pipeConn is a Conn under a write idle limit of idle, and the other end, which reads nothing
// unless told to.
func pipeConn(t *testing.T, idle time.Duration) (*Conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := &Conn{Conn: a, born: time.Now()}
	c.write.idle.Store(int64(idle))
	return c, b
}

// writeErr runs one Write and returns its error, failing the test if it takes 10 s.
func writeErr(t *testing.T, c net.Conn) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, 1))
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the write was not cut")
		return nil
	}
}

// Under the write idle limit, the server's later deadlines (an hour away, or none) do not lift
// it: a client that stops reading is dropped.
func TestWriteIdleLimitOwnsTheWriteDeadline(t *testing.T) {
	t.Parallel()
	c, _ := pipeConn(t, 200*time.Millisecond)
	c.arm(&c.write, time.Now())
	require.NoError(t, c.SetWriteDeadline(time.Now().Add(time.Hour)))
	require.NoError(t, c.SetDeadline(time.Time{}))
	require.True(t, errors.Is(writeErr(t, c), os.ErrDeadlineExceeded))
}

// A deadline in the past (a cut) applies at once and stays.
func TestCutStaysUnderTheIdleLimit(t *testing.T) {
	t.Parallel()
	c, _ := pipeConn(t, time.Hour)
	require.NoError(t, c.SetWriteDeadline(time.Now().Add(-time.Second)))
	require.NoError(t, c.SetWriteDeadline(time.Now().Add(time.Hour)))
	require.True(t, errors.Is(writeErr(t, c), os.ErrDeadlineExceeded))
}

// A connection whose writes keep moving is never cut, though it writes for three times the
// limit.
func TestMovingWritesAreNotCut(t *testing.T) {
	t.Parallel()
	c, other := pipeConn(t, 400*time.Millisecond)
	go func() {
		buf := make([]byte, 1)
		for range 12 {
			time.Sleep(100 * time.Millisecond)
			if _, err := other.Read(buf); err != nil {
				return
			}
		}
	}()
	for i := range 12 {
		_, err := c.Write([]byte{1})
		require.NoError(t, err, "byte %d", i)
	}
}

// ReadNothing tells a connection that has sent nothing from one that has.
func TestReadNothing(t *testing.T) {
	t.Parallel()
	c, other := pipeConn(t, 0)
	require.True(t, ReadNothing(c))
	go func() { _, _ = other.Write([]byte{1}) }()
	_, err := c.Read(make([]byte, 1))
	require.NoError(t, err)
	require.False(t, ReadNothing(c))
}
