package apptest

import (
	"errors"
	"net"
	"strconv"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
)

// A dead port refuses connections, no listener can take it until it is released, and one can
// right after.
func TestDeadPort(t *testing.T) {
	port, release := DeadPort(t)
	addr := "127.0.0.1:" + strconv.Itoa(port)
	_, err := net.Dial("tcp", addr)
	require.True(t, errors.Is(err, syscall.ECONNREFUSED), "dial a dead port: %v", err)
	_, err = net.Listen("tcp", addr)
	require.True(t, errors.Is(err, syscall.EADDRINUSE), "listen on a dead port before release: %v", err)
	release()
	ln, err := net.Listen("tcp", addr)
	require.NoError(t, err, "listen once released")
	ln.Close()
	release() // twice is harmless (the test's cleanup calls it again)
}
