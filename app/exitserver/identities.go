package exitserver

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/exit/exitdb"
)

// perIdentityBytes bounds the JSON size of one identity in an import body (a private identity
// is about 400 bytes of base64; escapes and spacing get generous room).
const perIdentityBytes = 4 << 10

type importRequest struct {
	Identities []string `json:"identities"`
}

// importShape is the body PUT /v1/identities wants, for its error messages.
const importShape = `{"identities": ["<private identity>", ...]}`

// importIdentities is PUT /v1/identities: all or nothing, 201 with the counts.
func (s *Server) importIdentities(c *fiber.Ctx) error {
	limit := int64(s.cfg.BatchLimit)*perIdentityBytes + 4096
	// The body and what is decoded from it, reserved in the memory budget while they live.
	release, err := s.budget.reserve(2*bodyBound(c, limit), budgetWait)
	if err != nil {
		return err
	}
	defer release()
	var req importRequest
	if err := readJSON(c, limit, &req, importShape); err != nil {
		return err
	}
	if req.Identities == nil {
		return apierr.InvalidBody.Msg("want %s: identities is missing", importShape)
	}
	if len(req.Identities) > s.cfg.BatchLimit {
		return apierr.PayloadTooLarge.Msg("%d identities in one request; the limit is %d (exit.batch_limit)",
			len(req.Identities), s.cfg.BatchLimit)
	}
	res, err := s.db.Import(c.UserContext(), req.Identities)
	if err != nil {
		var ie *exitdb.ImportError
		if errors.As(err, &ie) {
			e := apierr.InvalidIdentity.Msg("%d of %d identities cannot be imported; nothing was stored",
				len(ie.Entries), len(req.Identities))
			entries := ie.Entries
			if entries == nil {
				entries = []exitdb.EntryError{}
			}
			e.Fields = map[string]any{"entries": entries}
			return e
		}
		return classifyDBError(err)
	}
	return c.Status(fiber.StatusCreated).JSON(res)
}

const bodyKey = "exitserver.body"

// requestBody is the request body as a stream (empty when there is none), the same reader for
// every caller of one request.
func requestBody(c *fiber.Ctx) io.Reader {
	if r, ok := c.Locals(bodyKey).(io.Reader); ok {
		return r
	}
	var r io.Reader = bytes.NewReader(nil)
	if raw := c.Context().RequestBodyStream(); raw != nil {
		r = &stickyEOF{r: raw}
	}
	c.Locals(bodyKey, r)
	return r
}

// stickyEOF keeps answering io.EOF once its reader did: fasthttp's chunked request stream
// would otherwise wait for another chunk header after the last one.
type stickyEOF struct {
	r   io.Reader
	eof bool
}

func (s *stickyEOF) Read(p []byte) (int, error) {
	if s.eof {
		return 0, io.EOF
	}
	n, err := s.r.Read(p)
	if err == io.EOF {
		s.eof = true
	}
	return n, err
}

// bodyBound is the body size a handler reserves memory for: the announced Content-Length, or
// limit when there is none or it is over limit (the read stops past limit).
func bodyBound(c *fiber.Ctx, limit int64) int64 {
	n := int64(c.Request().Header.ContentLength())
	if n < 0 || n > limit {
		return limit
	}
	return n
}

// readJSON reads a body of up to limit bytes that holds one JSON object, without unknown
// fields, into v; shape is the body wanted, for the error message.
func readJSON(c *fiber.Ctx, limit int64, v any, shape string) error {
	raw, err := readLimited(requestBody(c), limit)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return apierr.InvalidBody.Msg("want %s: %s", shape, jsonProblem(err))
	}
	if dec.More() {
		return apierr.InvalidBody.Msg("want one JSON object, found more after it")
	}
	return nil
}

// readLimited reads all of r, or answers payload_too_large past limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, apierr.InvalidBody.Msg("reading the body: %v", err)
	}
	if int64(len(raw)) > limit {
		return nil, apierr.PayloadTooLarge.Msg("the body is over %d bytes", limit)
	}
	return raw, nil
}

// jsonProblem describes a JSON decoding error without quoting the input (which may hold
// identities).
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("invalid JSON at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s must be %s", te.Field, te.Type)
	case errors.Is(err, io.EOF):
		return "the body is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	msg := err.Error()
	if len(msg) > 120 {
		msg = msg[:120]
	}
	return msg
}
