package admin

import (
	"bufio"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Backup: GET /admin/backup streams a consistent copy of the data file (a bbolt file that
// `idvault serve` can open as is, with the same master key). Sealed values stay sealed.
func (h *Handler) Backup(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, "application/octet-stream")
	c.Set(fiber.HeaderContentDisposition, `attachment; filename="`+BackupName(time.Now())+`"`)
	c.Context().SetBodyStreamWriter(func(w *bufio.Writer) {
		// A failure here truncates the stream; the CLI verifies the file it receives.
		if _, err := h.WriteBackup(w); err == nil {
			_ = w.Flush()
		}
	})
	return nil
}
