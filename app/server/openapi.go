package server

import (
	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/openapi"
)

// serveOpenAPI answers GET /openapi.json with the document of every interface.
func serveOpenAPI(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.Send(openapi.JSON)
}
