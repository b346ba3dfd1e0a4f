package exitserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/requestid"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// keyLookupTimeout is the default of Config.KeyLookupTimeout: it starts once the ciphertext's
// header (a stream) or whole body (a simple format) is read, so an upload slower than it still
// decrypts.
const keyLookupTimeout = 30 * time.Second

// decrypt is POST /v1/decrypt: the raw ciphertext in, the clear bytes out.
func (s *Server) decrypt(c *fiber.Ctx) error {
	body := requestBody(c)
	var first [1]byte
	if n, err := io.ReadFull(body, first[:]); n == 0 {
		if err == io.EOF {
			return classifyDecryptError(fmt.Errorf("decrypt: %w: empty input", encryption.ErrUnknownFormat))
		}
		return apierr.InvalidBody.Msg("reading the body: %v", err)
	}
	v := encryption.Version(first[0])
	if !v.Supported() {
		return classifyDecryptError(fmt.Errorf("decrypt: %w: version %d", encryption.ErrUnknownFormat, first[0]))
	}
	if !v.IsStream() {
		return s.decryptSimple(c, first[0], body)
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.KeyLookupTimeout)
	defer cancel()
	limits := encryption.Limits{MaxChunkSize: s.cfg.MaxChunkSize, MaxSimpleSize: s.cfg.MaxBody}
	st := &clearStream{body: body, reqID: requestid.Of(c), log: s.cfg.Logger}
	// A stream's chunks are read ahead, from the first one on, while earlier ones are decrypted
	// and sent; once the answer started, a failure cuts the read waiting for the next chunk with
	// a read deadline in the past (before, the reader ends after its chunk: see clearStream.cut).
	dr, err := encryption.NewDecryptReader(&prefixed{first: first[:], r: body}, s.db.KeyFinder(ctx),
		encryption.WithLimits(limits), encryption.WithReadAhead(st.cut))
	if err != nil {
		return classifyDecryptError(err)
	}
	// The decrypter's three chunk buffers (WithReadAhead) and the first clear bytes.
	res, err := s.budget.hold(int64(3*dr.ChunkSize()+firstClear), budgetWait)
	if err != nil {
		return err
	}
	defer res.done()
	defer func() {
		if !res.handedOver {
			_ = dr.Close() // stops the read-ahead before the body is drained or the handler returns
		}
	}()
	// Verify the first chunk before committing to a 200, so that a wrong key or a corrupt start
	// still gets its error code. Read returns only bytes of verified chunks.
	head := make([]byte, firstClear)
	n, err := io.ReadFull(dr, head)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if err := noTrailingData(body); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
		return c.Send(head[:n])
	case err != nil:
		return classifyDecryptError(err)
	}
	c.Status(fiber.StatusOK)
	// The rest is written on the raw connection once this handler returned (fasthttp's own
	// chunked writer sends 4 KiB pieces, a syscall each, which caps a stream far below the
	// decryption rate): one HTTP chunk per verified encryption chunk. Nothing below may touch c.
	st.dr = dr
	st.pending = head[:n]
	// The answer is written on the connection itself, not fasthttp's wrapper of it, so that a
	// chunk goes out in one writev (net.Buffers) with its framing.
	raw := c.Context().Conn()
	st.keepAlive = keepable(raw) && c.Context().Request.Header.IsHTTP11() && !c.Context().Request.Header.ConnectionClose()
	s.streams.Add(1)
	release := res.handOver()
	c.Context().HijackSetNoResponse(true)
	c.Context().Hijack(func(hj net.Conn) {
		ok := st.run(raw)
		end := func() {
			_ = dr.Close() // stops a stream abandoned before WriteTo (the client went away)
			release()
			s.streams.Done()
		}
		if !ok {
			end()
			_ = raw.Close()
			return
		}
		// The stream is over. Its buffers are cleared and given back (then its budget) beside
		// the client's next request, which its connection serves, or it closes.
		go end()
		if !st.keepAlive || !s.serveAgain(raw, hj) {
			_ = raw.Close()
		}
	})
	return nil
}

// prefixed puts the format byte, read to choose the path, back before the rest of the body. It
// is a plain io.Reader on purpose: an io.WriterTo source (io.MultiReader is one) would turn the
// decrypter's read-ahead pipeline off.
type prefixed struct {
	first []byte
	r     io.Reader
}

func (p *prefixed) Read(b []byte) (int, error) {
	if len(p.first) > 0 {
		n := copy(b, p.first)
		p.first = p.first[n:]
		return n, nil
	}
	return p.r.Read(b)
}

// firstClear is how much clear text of a stream is verified before the 200 is sent.
const firstClear = 32 << 10

// decryptSimple reads a simple-format ciphertext whole (up to MaxBody), then resolves its key
// and answers the clear text with its length. The body and the clear text are reserved in the
// memory budget before the body is read, and given back once the answer is written.
func (s *Server) decryptSimple(c *fiber.Ctx, first byte, body io.Reader) error {
	limit := s.cfg.MaxBody
	size := int64(c.Request().Header.ContentLength())
	if size > limit {
		return apierr.PayloadTooLarge.Msg("%s", limitMessage(fmt.Errorf("%w: input of %d bytes above %d", encryption.ErrLimitExceeded, size, limit)))
	}
	// A known length: the body and the clear text, each as long. Chunked: the body is read into
	// a growing buffer (up to MaxBody and a quarter), so three times MaxBody.
	need := 2 * size
	if size < 0 {
		need = 3 * limit
	}
	res, err := s.budget.hold(need, budgetWait)
	if err != nil {
		return err
	}
	defer res.done()
	var data []byte
	if size > 0 {
		data = make([]byte, size)
		data[0] = first
		if _, err := io.ReadFull(body, data[1:]); err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				return classifyDecryptError(err)
			}
			return apierr.InvalidBody.Msg("reading the body: %v", err)
		}
	} else {
		data, err = io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader([]byte{first}), body), limit+1))
		if err != nil {
			return apierr.InvalidBody.Msg("reading the body: %v", err)
		}
		if int64(len(data)) > limit {
			return apierr.PayloadTooLarge.Msg("%s", limitMessage(fmt.Errorf("%w: input above %d bytes", encryption.ErrLimitExceeded, limit)))
		}
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.KeyLookupTimeout)
	defer cancel()
	clear, _, err := encryption.Decrypt(s.db.KeyFinder(ctx), data)
	if err != nil {
		return classifyDecryptError(err)
	}
	data = nil
	c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
	// The answer is sent from the clear text itself; fasthttp closes the reader once it is
	// written (or dropped), which gives the reservation back.
	c.Response().SetBodyStream(&releasingReader{Reader: bytes.NewReader(clear), release: res.handOver()}, len(clear))
	return nil
}

// releasingReader gives its memory reservation back when closed.
type releasingReader struct {
	*bytes.Reader
	release func()
}

func (r *releasingReader) Close() error {
	r.release()
	return nil
}

// streamIdle bounds how long a stream waits on a client that neither sends nor reads, when the
// connection is not one of Serve's: those keep their own idle limit (BodyIdleTimeout) on reads
// and writes, and ignore these deadlines but a cut.
const streamIdle = 5 * time.Minute

// clearStream writes a decrypt answer as HTTP/1.1 chunked transfer encoding on a hijacked
// connection. On any failure it closes the connection without the final zero-length chunk.
type clearStream struct {
	pending []byte // clear bytes verified before the answer started
	dr      *encryption.DecryptReader
	body    io.Reader
	reqID   string
	log     *slog.Logger
	// keepAlive: the client keeps its connection (HTTP/1.1, no Connection: close), which then
	// serves its next request once the stream ended well (serveAgain).
	keepAlive bool

	conn    net.Conn
	werr    error    // the client went away
	head    [20]byte // chunk size line
	bufs    [3][]byte
	written int64

	mu      sync.Mutex
	stopped bool // cut: the stream failed, the connection is being dropped
}

// cut makes the connection's pending and later reads and writes fail at once: the decrypter
// calls it when the stream stops early, to end the read it has waiting for the next chunk (and
// a write of an earlier chunk, if one is blocked). Nothing refreshes the deadline afterwards.
// Before the answer started (a first chunk that failed in the handler) it does nothing: the
// error answer must still go out, after the body is drained (errorHandler), so the reader is
// left to end after the chunk it is reading, under the body's idle limit, as the drain is.
func (s *clearStream) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn == nil {
		return
	}
	s.stopped = true
	_ = s.conn.SetDeadline(time.Now())
}

// extendDeadline gives the client another streamIdle to send or read, unless the stream was cut.
func (s *clearStream) extendDeadline() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.stopped {
		_ = s.conn.SetDeadline(time.Now().Add(streamIdle))
	}
}

// run writes the answer and reports whether it ended well (the final chunk sent).
func (s *clearStream) run(conn net.Conn) bool {
	s.mu.Lock()
	s.conn = conn
	s.mu.Unlock()
	closing := "Connection: close\r\n"
	if s.keepAlive {
		closing = ""
	}
	// The header and the first clear bytes (never empty here) go in one writev.
	err := s.sendChunk([]byte("HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n"+
		"Transfer-Encoding: chunked\r\n"+closing+"X-Request-ID: "+headerSafe(s.reqID)+"\r\n\r\n"), s.pending)
	if err == nil {
		_, err = io.Copy(s, s.dr) // DecryptReader.WriteTo: one Write per verified chunk
	}
	if err == nil {
		err = noTrailingData(s.body)
	}
	if err == nil {
		if _, err = s.send([]byte("0\r\n\r\n"), nil, nil); err == nil {
			return true
		}
	}
	if s.werr != nil {
		s.log.Info("decrypt stream: the client went away", "request_id", s.reqID, "clear_bytes", s.written)
		return false
	}
	e := apierr.As(classifyDecryptError(err))
	s.log.Warn("decrypt stream failed midway: connection dropped without the final chunk",
		"request_id", s.reqID, "code", e.Code.Name, "clear_bytes", s.written, "err", e.Error())
	return false
}

// Write sends p as one HTTP chunk.
func (s *clearStream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := s.sendChunk(s.head[:0], p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// sendChunk sends p as one HTTP chunk after before (the answer's header, or nothing), in one
// writev; before's array holds the chunk size line.
func (s *clearStream) sendChunk(before, p []byte) error {
	head := strconv.AppendInt(before, int64(len(p)), 16)
	head = append(head, '\r', '\n')
	if _, err := s.send(head, p, crlf); err != nil {
		return err
	}
	s.written += int64(len(p))
	return nil
}

var crlf = []byte("\r\n")

// send writes a, b and c in one writev, refreshing the idle deadline.
func (s *clearStream) send(a, b, c []byte) (int64, error) {
	s.extendDeadline()
	s.bufs = [3][]byte{a, b, c}
	bufs := net.Buffers(s.bufs[:])
	var n int64
	var err error
	if bw, ok := s.conn.(buffersWriter); ok {
		n, err = bw.WriteBuffers(&bufs) // netguard's connection: still one writev
	} else {
		n, err = bufs.WriteTo(s.conn)
	}
	if err != nil {
		s.mu.Lock()
		if !s.stopped { // a write cut because the stream failed is not the client's doing
			s.werr = err
		}
		s.mu.Unlock()
	}
	return n, err
}

// buffersWriter is a connection wrapper that writes net.Buffers in one writev (netguard.Conn).
type buffersWriter interface {
	WriteBuffers(*net.Buffers) (int64, error)
}

// headerSafe keeps a header value to printable ASCII.
func headerSafe(v string) string {
	b := []byte(v)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = '_'
		}
	}
	return string(b)
}

// noTrailingData checks that the ciphertext ended with its format: bytes after the final chunk
// mean the body is not one whole ciphertext.
func noTrailingData(body io.Reader) error {
	var b [1]byte
	n, err := io.ReadFull(body, b[:])
	if n > 0 {
		return apierr.DecryptionFailed.Msg("the body goes on after the end of the encrypted data")
	}
	if err != nil && err != io.EOF {
		return apierr.InvalidBody.Msg("reading the body: %v", err)
	}
	return nil
}

// classifyDecryptError maps the library's and the database's errors to the catalogue.
func classifyDecryptError(err error) error {
	if apierr.As(err) != nil {
		return err
	}
	var knf *exitdb.KeyNotFoundError
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		return apierr.InvalidBody.Msg("reading the body: no byte came within exit.body_idle_timeout")
	case errors.Is(err, exitdb.ErrUnavailable):
		return apierr.DatabaseUnavailable.Wrap(err)
	case errors.As(err, &knf) && len(knf.CreatorUserID) > 0 && !knf.CreatorImported:
		// Named only when importing that user would help.
		return apierr.KeyNotFound.Msg("no imported identity gives the key of this resource; "+
			"import the identity of user %s, who created it", base64.StdEncoding.EncodeToString(knf.CreatorUserID))
	case errors.Is(err, encryption.ErrKeyNotFound):
		return apierr.KeyNotFound.New()
	case errors.Is(err, encryption.ErrLimitExceeded):
		return apierr.PayloadTooLarge.Msg("%s", limitMessage(err))
	case errors.Is(err, encryption.ErrUnknownFormat):
		return apierr.UnsupportedFormat.New()
	case errors.Is(err, encryption.ErrDecryptionFailed), errors.Is(err, encryption.ErrBadPadding):
		return apierr.DecryptionFailed.New()
	case errors.Is(err, encryption.ErrTruncated):
		return apierr.TruncatedData.New()
	}
	return apierr.Internal(err)
}

// limitMessage explains which limit a ciphertext went over. The library's message names the
// sizes (never data).
func limitMessage(err error) string {
	return "the encrypted data is over a configured limit (exit.max_body for simple formats): " + err.Error()
}
