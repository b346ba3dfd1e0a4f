package fiberguard

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/netguard"
)

// DropSpare closes, without an answer, a connection whose header time limit ran out before it
// sent a single byte (a client's spare connection, dialed ahead and never used), and reports
// whether it did. An error handler calls it first: an answer written there would reach the
// client as an unsolicited response (Go's HTTP client logs one for each), while a client that
// did start a request still gets its 4xx.
func DropSpare(c *fiber.Ctx, err error) bool {
	if !errors.Is(err, fiber.ErrRequestTimeout) {
		return false
	}
	conn := c.Context().Conn()
	if !netguard.ReadNothing(conn) {
		return false
	}
	_ = conn.Close()
	return true
}
