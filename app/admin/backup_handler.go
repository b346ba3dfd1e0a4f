package admin

import (
	"fmt"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/store"
)

// Backup: GET /admin/backup streams a consistent copy of the data file (a bbolt file that
// `idvault serve` can open as is, with the same master key). Sealed values stay sealed.
//
// The copy is first written to a verified snapshot file next to the data file, so a slow client
// never holds a read transaction (which would stall writers when the file must grow). The 200
// carries the snapshot's exact Content-Length; if the stream then fails, the connection is
// closed, so a client always sees a short body rather than a complete-looking bad one. The write
// deadline is pushed back while the client makes progress, so a large backup to a slow but
// live client is not cut off by server.write_timeout.
func (h *Handler) Backup(c *fiber.Ctx) error {
	snap, err := h.backup.Snapshot()
	if err != nil {
		return apierr.Internal(err)
	}
	name := fmt.Sprintf("idvault-%s.db", time.Now().UTC().Format("20060102T150405Z"))
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	timeout := c.App().Config().WriteTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	c.Context().SetBodyStream(&progressReader{snap: snap, conn: c.Context().Conn(), timeout: timeout}, int(snap.Size))
	return nil
}

// progressReader reads the snapshot for fasthttp and, before each chunk, gives the connection
// a fresh write deadline: a client must keep reading, not finish within one write_timeout.
// fasthttp closes it when the response is done (or failed), which removes the snapshot.
type progressReader struct {
	snap    *store.Snapshot
	conn    net.Conn
	timeout time.Duration
}

func (r *progressReader) Read(p []byte) (int, error) {
	if r.conn != nil {
		_ = r.conn.SetWriteDeadline(time.Now().Add(r.timeout))
	}
	return r.snap.Read(p)
}

func (r *progressReader) Close() error { return r.snap.Close() }
