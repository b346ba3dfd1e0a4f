// Package openapi holds the OpenAPI 3.1 descriptions of idvault's HTTP interfaces, embedded in
// the binary: openapi.json, every interface of `idvault serve` (served at its /openapi.json), and
// exit.json, the exit server's (served at `idvault exit`'s /openapi.json). The test suite checks
// every answer its HTTP tests receive against them (app/apptest/openapi.go), so the documents
// follow the code. The files are written from the descriptions in document_test.go and
// exit_document_test.go, with the builder of builder_test.go (go test ./app/openapi -update); a
// test fails while a file and its description differ. The package holds the documents only: each
// server answers its GET /openapi.json itself.
package openapi

import _ "embed"

// JSON is the document of `idvault serve`.
//
//go:embed openapi.json
var JSON []byte
