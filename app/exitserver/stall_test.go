package exitserver_test

import (
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/exit/encryption"
)

// An upload that stops moving is dropped within body_idle_timeout whatever it sent before:
// part of a simple ciphertext with its length announced, a stream after its first chunks, and
// a chunked upload stopped inside one of its HTTP chunks. Each one's memory comes back.
func TestStalledUploadsAreDropped(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{BodyIdleTimeout: 300 * time.Millisecond})
	_, stream := g.stream(t, 8)
	simple, err := g.db.Encrypt(g.who, encryption.V3, randomBytes(36<<10-64), encryption.EncryptOptions{})
	require.NoError(t, err)
	for name, send := range map[string]func(c net.Conn) error{
		"16 KiB of a 36 KiB simple ciphertext": func(c net.Conn) error {
			_, err := io.WriteString(c, postHead("/v1/decrypt", len(simple))+string(simple[:16<<10]))
			return err
		},
		"a stream stopped after 32 KiB": func(c net.Conn) error {
			_, err := io.WriteString(c, postHead("/v1/decrypt", len(stream))+string(stream[:32<<10]))
			return err
		},
		"a chunked stream stopped inside a 64 KiB chunk": func(c net.Conn) error {
			_, err := fmt.Fprintf(c, "POST /v1/decrypt HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n%s",
				64<<10, stream[:40<<10])
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			c := g.dial(t)
			require.NoError(t, send(c))
			closed, _ := closedByServer(c) // the test's own limit: 20 s
			require.True(t, closed, "the stalled upload is dropped")
		})
	}
	require.Eventually(t, func() bool { return g.srv.Memory().Reserved == 0 }, 10*time.Second, 10*time.Millisecond,
		"the dropped uploads' memory is given back")
}
