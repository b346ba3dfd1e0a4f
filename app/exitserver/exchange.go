package exitserver

import (
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// exchange is one request and its answer, as the handlers see them.
type exchange struct {
	w     http.ResponseWriter
	r     *http.Request
	rc    http.ResponseController
	id    string    // the request ID (X-Request-ID)
	idv   [1]string // id, as its header's value
	route string    // the route's pattern, or "unmatched"
	// status is the answer's status once its header was written (0 before).
	status int

	// The body reads under the idle limit (Read), until cut.
	idle  time.Duration
	mu    sync.Mutex
	armed time.Time // when the read deadline was last set
	cut   bool      // reads and writes were made to fail at once: nothing extends them again
}

// Read reads the request body, giving the client another idle limit to send when an eighth of
// it went by since the deadline was last set: a body that stops moving is dropped between 7/8
// of BodyIdleTimeout and BodyIdleTimeout after its last byte, whatever came before.
func (x *exchange) Read(p []byte) (int, error) {
	x.mu.Lock()
	if now := time.Now(); !x.cut && now.Sub(x.armed) > x.idle/8 {
		x.armed = now
		_ = x.rc.SetReadDeadline(now.Add(x.idle)) // not supported in memory (httptest): no limit
	}
	x.mu.Unlock()
	n, err := x.r.Body.Read(p)
	if err != nil && err != io.EOF {
		x.mu.Lock()
		x.cut = true // a read that failed (a stalled body's) is not given more time
		x.mu.Unlock()
	}
	return n, err
}

// stop makes the connection's pending and later reads and writes fail at once.
func (x *exchange) stop() {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.cut = true
	now := time.Now()
	_ = x.rc.SetReadDeadline(now)
	_ = x.rc.SetWriteDeadline(now)
}

// header sets the answer's status and headers; body bytes follow with write.
func (x *exchange) header(status int, contentType []string, length int) {
	h := x.w.Header()
	h["Content-Type"] = contentType
	// net/http sets the length of an answer that fits its buffer (written at once, when the
	// handler returns) itself.
	if length >= smallAnswer {
		h["Content-Length"] = []string{strconv.Itoa(length)}
	}
	x.status = status
	x.w.WriteHeader(status)
}

// Content types of answers, shared: the header map holds them as they are.
var (
	octetStream = []string{"application/octet-stream"}
	jsonType    = []string{"application/json"}
)

// smallAnswer is the size from which an answer's Content-Length is set by the handler: below,
// net/http buffers the answer whole and sets it.
const smallAnswer = 2048

// send answers status with body.
func (x *exchange) send(status int, contentType []string, body []byte) error {
	x.header(status, contentType, len(body))
	_, err := x.write(body)
	return err
}

// writePiece is the most one write to the connection carries: the answer's idle limit
// (BodyIdleTimeout, netguard's) is refreshed between writes, so a slow client that keeps
// reading a large answer is not cut.
const writePiece = 256 << 10

// write writes p to the answer, writePiece bytes at a time.
func (x *exchange) write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := x.w.Write(p[n:min(len(p), n+writePiece)])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// json answers status with v as JSON.
func (x *exchange) json(status int, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return x.send(status, jsonType, raw)
}

// discardBody reads what is left of the request body, up to drainOnError bytes, so that a
// client still sending sees the answer rather than a reset connection. The connection is
// closed after the answer when the body was not read to its end (over the limit, or a read
// that failed, as a stalled body's): what is left of it cannot be told from the next request.
func (x *exchange) discardBody() {
	// CopyN ends with io.EOF when the body ended within the limit; any other end (the limit,
	// a read that failed or timed out) leaves the rest of the body on the connection.
	if _, err := io.CopyN(io.Discard, x, drainOnError); err != io.EOF {
		x.w.Header().Set("Connection", "close")
	}
}

// drainOnError is how much of an unread request body is read after an error.
const drainOnError = 64 << 20
