package openapi

import _ "embed"

// ExitJSON is the OpenAPI 3.1 document of the exit server (`idvault exit`), written from
// exit_document_test.go like openapi.json.
//
//go:embed exit.json
var ExitJSON []byte
