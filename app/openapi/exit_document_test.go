package openapi

import (
	"encoding/json"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
)

// exit.json, the document of the exit server (`idvault exit`), is written from the description
// below by the same -update run and with the same builder as openapi.json. Its error answers
// come from apierr.ExitCatalog; whether the server keeps to it is checked by every HTTP test of
// app/exitserver (apptest.ServeChecked).

func TestExitDocumentIsUpToDate(t *testing.T) {
	requireUpToDate(t, "exit.json", buildExit(), ExitJSON, "exit_document_test.go")
}

// The error codes of the exit server (apierr.ExitCatalog) are the ErrorCode enum of the exit
// document as built and served (exit.json, embedded as ExitJSON), no more and no fewer: a code
// added to the catalogue without the document being written again, or left in the document
// after it left the catalogue, fails here.
func TestExitDocumentCodesAreTheExitCatalogue(t *testing.T) {
	var doc struct {
		Components struct {
			Schemas struct {
				ErrorCode struct {
					Enum []string `json:"enum"`
				} `json:"ErrorCode"`
			} `json:"schemas"`
		} `json:"components"`
	}
	require.NoError(t, json.Unmarshal(ExitJSON, &doc))
	inDoc := slices.Sorted(slices.Values(doc.Components.Schemas.ErrorCode.Enum))
	require.NotEmpty(t, inDoc, "exit.json has no components.schemas.ErrorCode.enum")
	require.Equal(t, slices.Compact(slices.Clone(inDoc)), inDoc, "a code twice in the enum")

	var catalogue []string
	for _, c := range apierr.ExitCatalog {
		if !slices.Contains(catalogue, c.Name) { // a code may have an entry per status
			catalogue = append(catalogue, c.Name)
		}
	}
	sort.Strings(catalogue)
	require.Equal(t, catalogue, inDoc, "apierr.ExitCatalog (expected) against the ErrorCode enum of exit.json (actual): go test ./app/openapi -update")
}

func buildExit() []byte {
	b := newBuilder([]apierr.Code{apierr.InternalError, apierr.HeaderTooLarge, apierr.HostNotAllowed, apierr.MalformedRequest}, []apierr.Code{apierr.PayloadTooLarge})
	b.headers[401] = m{"WWW-Authenticate": m{"description": `Bearer realm="idvault exit"`, "required": true, "schema": m{"type": "string"}}}
	b.headers[503] = m{"Retry-After": m{"description": "seconds to wait before retrying", "required": true, "schema": m{"type": "integer", "minimum": 1}}}
	b.fields[apierr.InvalidIdentity.Name] = m{"message": "2 of 3 identities cannot be imported; nothing was stored",
		"entries": list{m{"index": 0, "reason": "the user is not in the dump"}, m{"index": 2, "reason": "an identity of another app"}}}
	sec := list{m{}, m{"exitToken": list{}}}
	authErr := []apierr.Code{apierr.Unauthorized, apierr.DatabaseUnavailable}

	b.add("/healthz", "get", operation{id: "healthz", tag: "operations", summary: "Liveness",
		desc:      "Answers as long as the process serves HTTP. Never needs the token.",
		responses: merge(jsonOK("alive", obj([]string{"status"}, m{"status": m{"const": "ok"}}), m{"status": "ok"}), b.errors(tanker, false))})
	b.add("/readyz", "get", operation{id: "readyz", tag: "operations", summary: "Readiness",
		desc: "200 when the database answers, `database_unavailable` 503 otherwise (the server recovers by itself once the database is back).",
		responses: merge(jsonOK("the database answers", ref("Readiness"), m{"status": "ready", "checks": m{"database": "ok"}}),
			b.errors(tanker, false, authErr...)),
		security: sec})
	b.add("/openapi.json", "get", operation{id: "openapi", tag: "operations", summary: "This document",
		desc:      "The OpenAPI description of the exit server (this file, embedded in the binary). Public, like `/healthz`: it holds nothing secret, and `idvault serve` serves its own document without a token too.",
		responses: merge(jsonOK("the document", m{"type": "object", "required": list{"openapi", "info", "paths"}}, nil), b.errors(tanker, false))})

	b.add("/v1/identities", "put", operation{id: "importIdentities", tag: "exit", summary: "Import private identities",
		desc: "Imports users' private identities (permanent ones, and the app half of provisional ones) into the database the server shares with every other instance on it. " +
			"All or nothing: when any entry cannot be imported nothing is stored, and the `invalid_identity` answer lists each bad entry by its index in `identities` with the reason (never the identity). " +
			"Re-importing is harmless (counted in `already_imported`). At most `exit.batch_limit` (default 1000) identities per request, `payload_too_large` beyond. " +
			"Unknown fields are refused (`invalid_body`). The body is read as JSON whatever its Content-Type.",
		responses: merge(ok("201", "every identity is stored (now or before)", ref("ImportResult"), m{"imported": 2, "already_imported": 1}, "application/json"),
			b.errors(tanker, true, append(slices.Clone(authErr), apierr.InvalidBody, apierr.InvalidIdentity, apierr.ServerBusy)...)),
		body:     jsonBody(ref("ImportRequest"), m{"identities": list{privID}}, true, ""),
		security: sec})
	b.add("/v1/decrypt", "post", operation{id: "decrypt", tag: "exit", summary: "Decrypt data",
		desc: "The encrypted bytes (any Tanker format, 1 to 11) as the raw body, the clear bytes as the answer. The resource key is found through the imported identities. The body is read as bytes whatever its Content-Type.\n\n" +
			"Simple formats are read whole, up to `exit.max_body` (default 64 MiB, `payload_too_large` beyond), and answered with a Content-Length.\n\n" +
			"Memory: a simple-format body takes twice its length (the body and the clear text; three times `exit.max_body` when sent chunked), a stream three of its chunks, from `exit.memory_budget` (default 256 MiB) while the request runs; a request that does not fit within 2 s gets `server_busy` 503 with `Retry-After`.\n\n" +
			"Stream formats (4, 8, 11) stream both ways at constant memory, whatever the size: the body is decrypted as it arrives, and the clear text is sent as HTTP/1.1 chunked transfer encoding, one verified encryption chunk at a time (a stream that ended well leaves its connection open for the next request, unless the request said `Connection: close`); clear bytes leave only after the chunk holding them verified. The first chunk is verified before the 200, so a wrong key or a corrupt start still gets its error answer. " +
			"**A stream that fails after the 200 (a tampered or missing chunk further on, trailing bytes) drops the connection without the final zero-length chunk**: a client must treat a truncated chunked answer (a read error before the end of the body) as a failure and discard what it received; every HTTP client reports it as an error.",
		responses: merge(m{"200": m{"description": "the clear bytes: with a Content-Length for simple formats, chunked for streams (a stream failing midway ends without its final chunk: a failure)",
			"content": m{"application/octet-stream": m{}}}},
			b.errors(tanker, true, append(slices.Clone(authErr), apierr.InvalidBody, apierr.UnsupportedFormat, apierr.TruncatedData, apierr.KeyNotFound, apierr.DecryptionFailed, apierr.ServerBusy)...)),
		body:     m{"required": true, "description": "the encrypted data, as it was stored", "content": m{"application/octet-stream": m{}}},
		security: sec})
	b.add("/v1/decrypt-batch", "post", operation{id: "decryptBatch", tag: "exit", summary: "Decrypt many small values",
		desc: "Many small ciphertexts (database columns, any Tanker format) in one request, for `idvault exit decrypt-records`. The body is a sequence of items, each `uvarint(length) || ciphertext` (the unsigned LEB128 varint of Go's encoding/binary and protobuf). " +
			"The answer holds one entry per item, in the same order: `0x00 uvarint(length) clear bytes` when it decrypted, `0x01 uvarint(length) code uvarint(length) message` when it did not, with the code and message `POST /v1/decrypt` would answer for it alone (`key_not_found`, `decryption_failed`, `unsupported_format`, `truncated_data`, `payload_too_large`).\n\n" +
			"Limits (fixed): at most 10000 items and 8 MiB of body, `payload_too_large` beyond; a value too big for a batch goes to `POST /v1/decrypt`, which streams. " +
			"A framing error is `invalid_body`. An item failing for the server's reason (`database_unavailable`, `internal_error`) fails the whole batch with that answer, so that the client retries it whole. " +
			"The body and the answer are reserved in `exit.memory_budget` until the answer is written (twice the body's length and 64 KiB): `server_busy` 503 when they do not fit beside the requests in flight, `payload_too_large` when they never can. The body is read as bytes whatever its Content-Type.",
		responses: merge(m{"200": m{"description": "one entry per item, in order: `0x00 uvarint(len) clear` or `0x01 uvarint(len) code uvarint(len) message`",
			"content": m{"application/octet-stream": m{}}}},
			b.errors(tanker, true, append(slices.Clone(authErr), apierr.InvalidBody, apierr.ServerBusy)...)),
		body:     m{"required": false, "description": "the ciphertexts, each as uvarint(length) || bytes (none: an empty answer)", "content": m{"application/octet-stream": m{}}},
		security: sec})

	b.add("/v1/audit", "post", operation{id: "audit", tag: "exit", summary: "Audit keys before decrypting",
		desc: "For each 16-byte key ID (the resource ID of formats 1 to 8, the session ID or the seed of formats 9 to 11, as read from a ciphertext's header), whether a key published under it reaches an imported identity (published to an imported user, to a group one is a member of, or to a provisional identity one holds), and, when not, the users whose identity would reach it: `holders`, the standard base64 of their hashed user IDs (published to them, to a group they are a member of directly or through a provisional identity they claimed, to a provisional identity they claimed), and `provisional`, the provisional identities nobody claimed whose private identity would reach it (published to them, or to a group they are a provisional member of), each as its public identity names it: `hashed_email:<base64>` or `hashed_phone_number:<base64>`, the hash of the dump's `tanker_provisional_keys` (a provisional identity a user claimed is named by that user, in `holders`). " +
			"It reads the dump's rows and the imported keys: it opens no key and decrypts nothing, so `idvault exit audit` can tell, before a long run, what will and will not open. `app_id` lets a client hash plain user IDs as Tanker does to name the holders. " +
			"At most 20 holders per ID, users and provisional identities together, users first by user ID (a key published to a group of thousands would otherwise make megabytes per key). At most 10000 IDs (`payload_too_large` beyond); unknown fields and IDs that are not the base64 of 16 bytes are `invalid_body`. The body and the largest answer it can have are reserved in `exit.memory_budget` (`server_busy` 503 when they do not fit). The body is read as JSON whatever its Content-Type.",
		responses: merge(jsonOK("one entry per ID, in order", ref("AuditAnswer"), m{"app_id": "c2FtcGxlLWFwcC1pZC0wMTIzNDU2Nzg5YWJjZGVmMDE=",
			"keys": list{m{"reachable": true, "holders": list{}, "provisional": list{}}, m{"reachable": false, "holders": list{"dXNlci1pZC0wMTIzNDU2Nzg5YWJjZGVmMDEyMzQ1Njc="},
				"provisional": list{"hashed_email:0u2c8w8EIZWT2FzRN/yyM5qIbEGYTNDT5SkWVBu20Qo="}}}}),
			b.errors(tanker, true, append(slices.Clone(authErr), apierr.InvalidBody, apierr.ServerBusy)...)),
		body:     jsonBody(ref("AuditRequest"), m{"ids": list{"AAECAwQFBgcICQoLDA0ODw=="}}, true, ""),
		security: sec})

	doc := m{
		"openapi": "3.1.0",
		"info": m{"title": "idvault exit", "version": "1",
			"summary":     "The exit tool's server: import private identities, decrypt the app's data",
			"description": exitDescription(),
			"license":     license},
		"servers": list{m{"url": "/", "description": "the `idvault exit` server that serves this document (127.0.0.1:8000 by default)"}},
		"tags": list{m{"name": "operations"},
			m{"name": "exit", "description": "`Authorization: Bearer <token>` when the server has a token (`--token`, `exit.token`)"}},
		"paths":      b.paths,
		"components": withSchemas(exitComponents(b.examples), b.schemas),
	}
	return render(doc)
}

// exitDescription is the exit document's introduction, with the exit catalogue as a table.
func exitDescription() string {
	return "The HTTP interface of `idvault exit`, a separate server over a PostgreSQL database restored from an exit dump: it imports the users' private identities, then decrypts any of the app's data. Several instances may share one database.\n\n" +
		"Authentication: with a token (`--token`, `exit.token`), every route but `/healthz` and `/openapi.json` needs `Authorization: Bearer <token>` (`unauthorized` 401 with `WWW-Authenticate` otherwise); without one the server listens on loopback only, unless `--insecure`.\n\n" +
		"Errors are `{\"error\": {\"status\", \"code\", \"message\", \"trace_id\"}}` (`trace_id` is the `X-Request-ID` of the answer); `invalid_identity` adds `entries`, `[{\"index\", \"reason\"}]`. `database_unavailable` and `server_busy` 503 carry `Retry-After`. Any route may answer `not_found` 404 (unknown path), `method_not_allowed` 405, `malformed_request` 400 (two `Host` headers, or `Content-Length` with `Transfer-Encoding`, and the connection is then closed; or a body with a `Content-Encoding` other than `identity`: bodies are read as sent, uncompressed), `host_not_allowed` 421 (a `Host` outside `exit.allowed_hosts`; on a loopback listen address only loopback names by default), `request_header_too_large` 431 (a request line and headers over 4 KiB) and `internal_error` 500. " +
		"After an early error the server reads up to 64 MiB of the unread body, so that a client still sending sees the answer, then closes the connection.\n\n" +
		"Routes marked `x-idvault-any-content-type` read their body as their one media type whatever the Content-Type sent. The test suite checks every answer the exit server's HTTP tests receive against this document (app/apptest/openapi.go).\n\n" +
		catalogueTable(apierr.ExitCatalog)
}

func exitComponents(examples m) m {
	httpStatus := m{"type": "integer", "minimum": 400, "maximum": 599}
	entry := obj([]string{"index", "reason"}, m{
		"index":  m{"type": "integer", "minimum": 0, "description": "position of the entry in `identities`, from 0"},
		"reason": m{"type": "string", "minLength": 1, "description": "why it cannot be imported (never the identity itself)"}})
	isInvalidIdentity := m{"properties": m{"error": m{"properties": m{"code": m{"const": apierr.InvalidIdentity.Name}}}}}
	return m{
		"examples": examples,
		"securitySchemes": m{
			"exitToken": m{"type": "http", "scheme": "bearer", "description": "the server's token (`--token`, `exit.token`, `IDVAULT_EXIT__TOKEN`); required when it is set"}},
		"schemas": m{
			"ErrorCode":  m{"type": "string", "enum": codeNames(apierr.ExitCatalog), "description": "a code of the exit catalogue (apierr.ExitCatalog in app/apierr/catalog.go)"},
			"EntryError": merge(entry, m{"example": m{"index": 2, "reason": "the user is not in the dump"}}),
			"TankerError": merge(obj([]string{"error"}, m{"error": obj([]string{"status", "code", "message", "trace_id"}, m{
				"status": httpStatus, "code": ref("ErrorCode"), "message": m{"type": "string", "minLength": 1}, "trace_id": m{"type": "string", "minLength": 1},
				"entries": m{"type": "array", "items": ref("EntryError"), "description": "with `invalid_identity` only: every entry that cannot be imported"}})}),
				m{"if": isInvalidIdentity,
					"then":    m{"properties": m{"error": m{"required": list{"entries"}}}},
					"else":    m{"properties": m{"error": m{"not": m{"required": list{"entries"}}}}},
					"example": m{"error": m{"status": 404, "code": apierr.KeyNotFound.Name, "message": apierr.KeyNotFound.Message, "trace_id": traceID}}}),
			"Readiness": obj([]string{"status", "checks"}, m{
				"status": m{"const": "ready"},
				"checks": obj([]string{"database"}, m{"database": m{"const": "ok"}})}),
			"ImportRequest": obj([]string{"identities"}, m{
				"identities": m{"type": "array", "items": m{"type": "string", "contentEncoding": "base64", "description": "a private identity (permanent or provisional) of the app, as Tanker's SDKs make them"},
					"description": "at most `exit.batch_limit` (default 1000) entries"}}),
			"AuditRequest": obj([]string{"ids"}, m{
				"ids": m{"type": "array", "maxItems": 10000, "items": m{"type": "string", "contentEncoding": "base64", "pattern": "^[A-Za-z0-9+/]{22}==$",
					"description": "a 16-byte key ID: resource ID (formats 1 to 8), session ID or seed (formats 9 to 11)"}}}),
			"AuditAnswer": obj([]string{"app_id", "keys"}, m{
				"app_id": m{"type": "string", "contentEncoding": "base64", "description": "the app's ID (32 bytes), to hash plain user IDs as Tanker does"},
				"keys": m{"type": "array", "items": obj([]string{"reachable", "holders", "provisional"}, m{
					"reachable": m{"type": "boolean", "description": "a key published under the ID reaches an imported identity"},
					"holders": m{"type": "array", "items": m{"type": "string", "contentEncoding": "base64"},
						"description": "when not reachable: the hashed user IDs whose identity would reach it (empty when reachable, or when no user holds it)"},
					"provisional": m{"type": "array", "items": m{"type": "string", "pattern": "^hashed_(email|phone_number):[A-Za-z0-9+/]{43}=$"},
						"description": "when not reachable: the provisional identities nobody claimed whose private identity would reach it, as `hashed_email:<base64>` or `hashed_phone_number:<base64>` (the value of their public identity)"}})}}),
			"ImportResult": obj([]string{"imported", "already_imported"}, m{
				"imported":         m{"type": "integer", "minimum": 0, "description": "identities stored by this request"},
				"already_imported": m{"type": "integer", "minimum": 0, "description": "identities that were stored before (re-importing is harmless)"}}),
		},
	}
}
