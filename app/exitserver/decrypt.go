package exitserver

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/httpguard"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// keyLookupTimeout is the default of Config.KeyLookupTimeout: it starts once the ciphertext's
// header (a stream) or whole body (a simple format) is read, so an upload slower than it still
// decrypts.
const keyLookupTimeout = 30 * time.Second

// decrypt is POST /v1/decrypt: the raw ciphertext in, the clear bytes out.
func (s *Server) decrypt(x *exchange) error {
	var first [1]byte
	if n, err := io.ReadFull(x, first[:]); n == 0 {
		if err == io.EOF {
			return classifyDecryptError(fmt.Errorf("decrypt: %w: empty input", encryption.ErrUnknownFormat))
		}
		return classifyBodyError(err)
	}
	v := encryption.Version(first[0])
	if !v.Supported() {
		return classifyDecryptError(fmt.Errorf("decrypt: %w: version %d", encryption.ErrUnknownFormat, first[0]))
	}
	if !v.IsStream() {
		return s.decryptSimple(x, first[0])
	}
	ctx := s.lookupContext()
	defer ctx.cancel()
	limits := encryption.Limits{MaxChunkSize: s.cfg.MaxChunkSize, MaxSimpleSize: s.cfg.MaxBody}
	st := &clearStream{x: x, log: s.cfg.Logger}
	// A stream's chunks are read ahead, from the first one on, while earlier ones are decrypted
	// and sent; once the answer started, a failure cuts the read waiting for the next chunk with
	// a read deadline in the past (before, the reader ends after its chunk: see clearStream.cut).
	dr, err := encryption.NewDecryptReader(&prefixed{first: first[:], r: x}, s.db.KeyFinder(ctx),
		encryption.WithLimits(limits), encryption.WithReadAhead(st.cut))
	if err != nil {
		return classifyDecryptError(err)
	}
	// The decrypter's three chunk buffers (WithReadAhead) and the first clear bytes.
	held, err := s.budget.reserve(int64(3*dr.ChunkSize()+firstClear), budgetWait)
	if err != nil {
		_ = dr.Close()
		return err
	}
	defer func() {
		_ = dr.Close() // stops the read-ahead before the body is drained or the handler returns
		held.release()
	}()
	// Verify the first chunk before committing to a 200, so that a wrong key or a corrupt start
	// still gets its error code. Read returns only bytes of verified chunks.
	head := make([]byte, firstClear)
	n, err := io.ReadFull(dr, head)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if err := noTrailingData(x); err != nil {
			return err
		}
		return x.send(http.StatusOK, octetStream, head[:n])
	case err != nil:
		return classifyDecryptError(err)
	}
	if err := st.run(head[:n], dr); err != nil {
		return err
	}
	// The stream ended well: its connection waits for the client's next request as a new
	// connection would (header_timeout), not the idle timeout.
	httpguard.WaitNextWithin(x.r.Context(), s.cfg.HeaderTimeout)
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
func (s *Server) decryptSimple(x *exchange, first byte) error {
	limit := s.cfg.MaxBody
	size := x.r.ContentLength
	if size > limit {
		return apierr.PayloadTooLarge.Msg("%s", limitMessage(fmt.Errorf("%w: input of %d bytes above %d", encryption.ErrLimitExceeded, size, limit)))
	}
	// A known length: the body and the clear text, each as long. Chunked: the body is read into
	// a growing buffer (up to MaxBody and a quarter), so three times MaxBody.
	need := 2 * size
	if size < 0 {
		need = 3 * limit
	}
	held, err := s.budget.reserve(need, budgetWait)
	if err != nil {
		return err
	}
	defer held.release()
	var data []byte
	if size > 0 {
		data = smallBodies.get(int(size))
		defer smallBodies.put(data)
		data[0] = first
		if _, err := io.ReadFull(x, data[1:]); err != nil {
			return classifyBodyError(err)
		}
	} else {
		data, err = io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader([]byte{first}), x), limit+1))
		if err != nil {
			return classifyBodyError(err)
		}
		if int64(len(data)) > limit {
			return apierr.PayloadTooLarge.Msg("%s", limitMessage(fmt.Errorf("%w: input above %d bytes", encryption.ErrLimitExceeded, limit)))
		}
	}
	ctx := s.lookupContext()
	defer ctx.cancel()
	// Opened in the body's own buffer, which smallBodies.put clears (a chunked body's is not).
	text, _, err := encryption.DecryptInPlace(s.db.KeyFinder(ctx), data)
	if err != nil {
		return classifyDecryptError(err)
	}
	return x.send(http.StatusOK, octetStream, text)
}

// smallBodies holds the buffers of simple ciphertexts up to smallBody bytes, the common case,
// so that such a request allocates no body. A ciphertext is opened in its buffer: put clears
// what a request used before the buffer goes back to the pool.
var smallBodies = bodyPool{pool: sync.Pool{New: func() any { return new([smallBody]byte) }}}

// smallBody is the largest body smallBodies holds.
const smallBody = 4 << 10

type bodyPool struct{ pool sync.Pool }

// get returns a buffer of n bytes: from the pool up to smallBody, allocated above.
func (p *bodyPool) get(n int) []byte {
	if n > smallBody {
		return make([]byte, n)
	}
	return p.pool.Get().(*[smallBody]byte)[:n]
}

// put clears a buffer get returned (it held clear text) and gives it back.
func (p *bodyPool) put(b []byte) {
	clear(b)
	if cap(b) == smallBody {
		p.pool.Put((*[smallBody]byte)(b[:smallBody]))
	}
}

// classifyBodyError maps a failed read of the request body.
func classifyBodyError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return classifyDecryptError(err)
	}
	return apierr.InvalidBody.Msg("reading the body: %v", err)
}

// clearStream writes a decrypt answer as HTTP/1.1 chunked transfer encoding, one HTTP chunk
// per verified encryption chunk, while the request body still comes in (full duplex). On any
// failure the connection is dropped without the final zero-length chunk.
type clearStream struct {
	x       *exchange
	log     *slog.Logger
	written int64

	mu      sync.Mutex
	started bool // the answer started: a failure cuts the connection
	stopped bool // cut: the stream failed, the connection is being dropped
	werr    error
}

// cut makes the connection's pending and later reads and writes fail at once: the decrypter
// calls it when the stream stops early, to end the read it has waiting for the next chunk (and
// a write of an earlier chunk, if one is blocked). Before the answer started (a first chunk
// that failed in the handler) it does nothing: the error answer must still go out, after the
// body is drained (renderError), so the reader is left to end after the chunk it is reading,
// under the body's idle limit, as the drain is.
func (s *clearStream) cut() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return
	}
	s.stopped = true
	s.x.stop()
}

// run writes the answer: the clear bytes verified before it, then the rest as it is verified.
// It returns nil when the answer ended well (its body's end checked), and errStreamCut when
// the connection must be dropped.
func (s *clearStream) run(pending []byte, dr *encryption.DecryptReader) error {
	x := s.x
	_ = x.rc.EnableFullDuplex() // the body is still read while the answer is written
	s.mu.Lock()
	s.started = true
	s.mu.Unlock()
	x.header(http.StatusOK, octetStream, -1)
	_, err := s.Write(pending)
	if err == nil {
		_, err = io.Copy(s, dr) // DecryptReader.WriteTo: one Write per verified chunk
	}
	if err == nil {
		err = noTrailingData(x)
	}
	if err == nil {
		return nil
	}
	_ = dr.Close()
	s.mu.Lock()
	werr := s.werr
	s.mu.Unlock()
	if werr != nil {
		s.log.Info("decrypt stream: the client went away", "request_id", x.id, "clear_bytes", s.written)
		return errStreamCut
	}
	e := apierr.As(classifyDecryptError(err))
	s.log.Warn("decrypt stream failed midway: connection dropped without the final chunk",
		"request_id", x.id, "code", e.Code.Name, "clear_bytes", s.written, "err", e.Error())
	return errStreamCut
}

// Write sends p as one HTTP chunk, at once.
func (s *clearStream) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := s.x.write(p)
	if err == nil {
		err = s.x.rc.Flush()
	}
	if err != nil {
		s.mu.Lock()
		if !s.stopped { // a write cut because the stream failed is not the client's doing
			s.werr = err
		}
		s.mu.Unlock()
		return n, err
	}
	s.written += int64(n)
	return n, nil
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
