package admin

import (
	"bufio"
	"fmt"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Backup: GET /admin/backup streams a consistent copy of the data file (a bbolt file that
// `idvault serve` can open as is, with the same master key). Sealed values stay sealed.
func (h *Handler) Backup(c *fiber.Ctx) error {
	name := fmt.Sprintf("idvault-%s.db", time.Now().UTC().Format("20060102T150405Z"))
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// A failure here truncates the stream; the CLI verifies the file it receives.
		if _, err := h.backup.Backup(w); err == nil {
			_ = w.Flush()
		}
	})
	return nil
}
