package server

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/apierr"
)

// readBodies makes app read each request body whole before any middleware or handler, with
// memory that grows with the bytes that really arrived. The server streams bodies
// (StreamRequestBody): fasthttp otherwise allocates a body's whole Content-Length as soon as
// the headers are in: a client could make the server hold body_limit bytes per connection, up
// to max_connections of them (4 GiB at the defaults), for a few hundred bytes each
// (TestAnnouncedBodiesDoNotReserveMemory: 8 connections announcing 64 MiB would hold 512 MiB).
// Streaming costs about 1 µs of server CPU per request (make bench-profile ROW=known).
// A body over limit is 413 body_too_large (from its Content-Length before any of it is read, or
// once a chunked body passes it); a body cut short or too slow (server.read_timeout still bounds
// the whole request) is 400 malformed_request; both close the connection, whose next request
// would start nobody knows where.
func readBodies(app *fiber.App, handleErr fiber.ErrorHandler, limit int) {
	if limit <= 0 {
		limit = fiber.DefaultBodyLimit
	}
	srv := app.Server()
	// A body announced over the limit is refused once its first byte is in, not after the
	// 8 KiB fasthttp reads ahead of a streamed body: a client that sends only the start of it
	// gets its 413 at once. The read deadline is left alone (server.read_timeout runs on).
	srv.HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if h.ContentLength() > limit {
			return fasthttp.RequestConfig{MaxRequestBodySize: 1}
		}
		return fasthttp.RequestConfig{}
	}
	next := srv.Handler
	srv.Handler = func(fctx *fasthttp.RequestCtx) {
		stream := fctx.RequestBodyStream()
		if stream == nil {
			next(fctx)
			return
		}
		b := bodyBuffers.Get().(*bodyBuffer)
		err := b.read(stream, fctx.Request.Header.ContentLength(), limit)
		if err == nil {
			fctx.Request.SetBody(b.buf.Bytes()) // a copy into fasthttp's pooled buffer; also ends the stream
		}
		b.limited.R = nil
		if b.buf.Cap() <= maxPooledBody {
			b.buf.Reset()
			bodyBuffers.Put(b)
		}
		if err == nil {
			next(fctx)
			return
		}
		c := app.AcquireCtx(fctx)
		defer app.ReleaseCtx(c)
		_ = handleErr(c, err)
		fctx.Response.Header.SetConnectionClose()
	}
}

// bodyBuffers holds the buffers bodies are read into, up to maxPooledBody bytes each (a larger
// one, after a large body, goes back to the garbage collector).
var bodyBuffers = sync.Pool{New: func() any { return new(bodyBuffer) }}

const maxPooledBody = 64 << 10

// bodyBuffer is a body's buffer, with the reader that bounds what is read into it (pooled with
// it rather than allocated per request).
type bodyBuffer struct {
	buf     bytes.Buffer
	limited io.LimitedReader
}

// read reads stream, whose Content-Length is length (negative when chunked), up to limit
// bytes, into b.buf.
func (b *bodyBuffer) read(stream io.Reader, length, limit int) error {
	if length > limit {
		return apierr.BodyTooLarge.New()
	}
	if length > 0 {
		b.buf.Grow(min(length, 8<<10)) // what fasthttp already read; more only as it arrives
	}
	b.limited = io.LimitedReader{R: stream, N: int64(limit) + 1}
	n, err := b.buf.ReadFrom(&b.limited)
	switch {
	case n > int64(limit):
		return apierr.BodyTooLarge.New()
	case err != nil:
		return apierr.MalformedRequest.Msg("reading the request body: %s", bodyReadProblem(err))
	case length >= 0 && n != int64(length):
		return apierr.MalformedRequest.Msg("the request body ends after %d of its %d bytes", n, length)
	}
	return nil
}

// bodyReadProblem names a read error without the peer's address.
func bodyReadProblem(err error) string {
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		return "timeout (server.read_timeout)"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return "cut short"
	}
	return "invalid framing"
}
