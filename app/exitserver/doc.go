// Package exitserver is the HTTP interface of the exit tool (`idvault exit`): it imports users'
// private identities into a database restored from an exit dump and decrypts the app's data.
//
// Routes (one list in server.go):
//
//	GET  /healthz        200 while the process runs (never authenticated)
//	GET  /openapi.json   the OpenAPI 3.1 document of these routes (app/openapi/exit.json; never
//	                     authenticated: it holds nothing secret, as idvault serve's own document)
//	GET  /readyz         200 when the database answers, 503 otherwise
//	PUT  /v1/identities  {"identities": ["<private identity>", ...]} -> 201 {"imported", "already_imported"}
//	POST /v1/decrypt     the encrypted bytes as the raw body -> 200, the clear bytes
//	POST /v1/decrypt-batch  many small ciphertexts, each uvarint(length) || bytes -> 200, per
//	                     item 0x00 uvarint(length) clear, or 0x01 code and message (batch.go)
//	POST /v1/audit       {"ids": ["<base64 16-byte ID>", ...]} -> 200 {"app_id", "keys": [{"reachable",
//	                     "holders", "provisional"}]}: which keys the imported identities reach, and
//	                     who holds the others (users, provisional identities nobody claimed),
//	                     without opening a key (audit.go)
//
// With a token every route but /healthz and /openapi.json needs "Authorization: Bearer <token>"
// (compared in constant time). Errors are {"error": {"status", "code", "message", "trace_id"}} with the codes
// of app/apierr; invalid_identity adds "entries": [{"index", "reason"}].
//
// The server is Go's net/http. Decrypting stream formats streams both ways: the request body
// is read as it arrives and the clear text is written as HTTP/1.1 chunked transfer encoding
// while the body still comes in (http.ResponseController's EnableFullDuplex), one HTTP chunk
// per verified encryption chunk, so memory stays at three encrypted chunks whatever the size:
// chunks are read ahead in a goroutine, from the first one on, while the previous one is
// decrypted in place and the one before is written (the encryption library's WithReadAhead).
// Clear bytes are written only after the chunk holding them verified. The first chunk is
// verified before the 200 is committed, so a wrong key or a corrupt start still gets a JSON
// error; a stream that fails later drops the connection without the terminating zero-length
// chunk (http.ErrAbortHandler), so no HTTP client can take a cut output for a whole one. A
// stream that ended well keeps its connection for the client's next request, which must then
// start within HeaderTimeout, unless the client asked for Connection: close.
// Simple (non-stream) formats are read whole, up to MaxBody bytes (payload_too_large beyond),
// and answered with a Content-Length on a keep-alive connection.
//
// Serve runs the application behind app/netguard (accept errors retried, connections capped,
// answers under an idle limit) and httpguard.Heads (each request head read and checked before
// net/http sees it), as `idvault exit` does. Every request has a time limit on its head
// (HeaderTimeout from its first byte, in total: a head that started gets 400 invalid_body, a
// connection that sent nothing is closed without an answer), on its body and answer
// (BodyIdleTimeout without a byte, whatever came before: each read of the body sets the
// connection's read deadline again) and on the keep-alive wait (IdleTimeout); bodies, stream
// buffers and batch answers at their worst are reserved in a memory budget (MemoryBudget,
// budget.go) before they are read, and a request that does not fit gets 503 server_busy.
// Heads over 4 KiB get 431, foreign Host headers 421 and ambiguous framing 400 (app/httpguard).
//
// The package depends on the database through the small DB interface (db.go); the exit/exitdb
// implementation is adapted to it by the command line, and tests use an in-memory fake.
package exitserver
