// Package openapi holds the OpenAPI 3.1 description of every HTTP interface of idvault
// (openapi.json, embedded in the binary and served at /openapi.json). The test suite checks
// every answer its HTTP tests receive against it (app/apptest/openapi.go), so the document
// follows the code. The file is written from the description in document_test.go
// (go test ./app/openapi -update); a test fails while the two differ.
package openapi

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// JSON is the document.
//
//go:embed openapi.json
var JSON []byte

// Serve answers GET /openapi.json.
func Serve(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
	c.Set(fiber.HeaderCacheControl, "no-cache")
	return c.Send(JSON)
}
