package exitserver

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"time"

	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
	"idvault/exit/encryption"
)

// keyLookupTimeout bounds the database work of resolving one resource key.
const keyLookupTimeout = 30 * time.Second

// decrypt is POST /v1/decrypt: the raw ciphertext in, the clear bytes out.
func (s *Server) decrypt(c *fiber.Ctx) error {
	body := requestBody(c)
	ctx, cancel := context.WithTimeout(c.UserContext(), keyLookupTimeout)
	defer cancel()
	limits := encryption.Limits{MaxChunkSize: s.cfg.MaxChunkSize, MaxSimpleSize: s.cfg.MaxBody}
	dr, err := encryption.NewDecryptReader(body, s.db.KeyFinder(ctx), encryption.WithLimits(limits))
	if err != nil {
		return classifyDecryptError(err)
	}
	// Verify the first chunk before committing to a 200, so that a wrong key or a corrupt start
	// still gets its error code. Read returns only bytes of verified chunks.
	first := make([]byte, 32<<10)
	n, err := io.ReadFull(dr, first)
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		if err := noTrailingData(body); err != nil {
			return err
		}
		c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
		return c.Send(first[:n])
	case err != nil:
		return classifyDecryptError(err)
	}
	c.Status(fiber.StatusOK)
	c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
	// One stream per connection: if it fails midway, the connection is dropped anyway.
	c.Response().Header.SetConnectionClose()
	// The rest is pulled by fasthttp while it writes the response, after this handler returned:
	// nothing below may touch c.
	c.Context().SetBodyStream(&clearStream{
		pending: first[:n], dr: dr, body: body, log: s.failureLogger(requestID(c)),
	}, -1)
	return nil
}

// clearStream is the response body of a streamed decrypt. An error is returned to fasthttp
// (never io.EOF), which then drops the connection without the final zero-length chunk.
type clearStream struct {
	pending []byte
	dr      io.Reader
	body    io.Reader
	err     error
	log     func(error)
}

func (s *clearStream) Read(p []byte) (int, error) {
	if len(s.pending) > 0 {
		n := copy(p, s.pending)
		s.pending = s.pending[n:]
		return n, nil
	}
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.dr.Read(p)
	if err == io.EOF {
		err = noTrailingData(s.body)
		if err == nil {
			return n, io.EOF
		}
	}
	if err != nil {
		s.err = errStreamAborted
		s.log(err)
		if n > 0 {
			return n, nil // verified bytes; the error comes on the next call
		}
		return 0, s.err
	}
	return n, nil
}

var errStreamAborted = errors.New("decrypt stream aborted")

// failureLogger logs a stream that failed after its 200 went out (the request log already
// said 200).
func (s *Server) failureLogger(reqID string) func(error) {
	return func(err error) {
		e := apierr.As(classifyDecryptError(err))
		s.cfg.Logger.Warn("decrypt stream aborted midway: connection dropped", "request_id", reqID,
			"code", e.Code.Name, "err", e.Error())
	}
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
	var knf *KeyNotFoundError
	switch {
	case errors.Is(err, ErrUnavailable):
		return apierr.DatabaseUnavailable.Wrap(err)
	case errors.As(err, &knf) && len(knf.CreatorUserID) > 0:
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
