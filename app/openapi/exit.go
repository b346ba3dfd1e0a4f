package openapi

import (
	_ "embed"

	"github.com/gofiber/fiber/v2"
)

// ExitJSON is the OpenAPI 3.1 document of the exit server (`idvault exit`), written from
// exit_document_test.go like openapi.json.
//
//go:embed exit.json
var ExitJSON []byte

// ServeExit answers the exit server's GET /openapi.json.
func ServeExit(c *fiber.Ctx) error { return sendDoc(c, ExitJSON) }
