package server

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"strings"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
)

// bodyDecoder decodes a request body sent with Content-Encoding (gzip, x-gzip, deflate, br,
// identity, in any order and number) before any handler reads it, and refuses a decoded body over
// limit (server.body_limit) with 413 body_too_large, as for a plain body. fiber's Ctx.Body
// decoded without any bound: a 200 kB gzip body of one repeated byte grew to a gigabyte in
// memory. Another encoding, or a body that is not valid data of its encoding, is 400
// malformed_request. Handlers then see the plain body and no Content-Encoding. The function it
// returns decodes in place, or returns the error to answer (the front middleware runs it).
func bodyDecoder(limit int) func(c *fiber.Ctx) error {
	if limit <= 0 {
		limit = fiber.DefaultBodyLimit
	}
	return func(c *fiber.Ctx) error {
		header := c.Request().Header.Peek(fiber.HeaderContentEncoding)
		if len(header) == 0 { // the usual request: one header lookup
			return nil
		}
		body := c.Request().Body()
		if len(body) == 0 { // a GET from a client that always says gzip: nothing to decode
			c.Request().Header.Del(fiber.HeaderContentEncoding)
			return nil
		}
		encodings := strings.Split(string(header), ",")
		if len(encodings) > maxEncodings { // each layer may cost a decoding up to limit
			return apierr.MalformedRequest.Msg("the body's Content-Encoding lists %d encodings: at most %d", len(encodings), maxEncodings)
		}
		for i := len(encodings) - 1; i >= 0; i-- { // the last encoding listed was applied last
			enc := strings.ToLower(strings.TrimSpace(encodings[i]))
			if enc == "identity" || enc == "" {
				continue
			}
			decoded, err := decode(enc, body, limit)
			if err != nil {
				return err
			}
			body = decoded
		}
		c.Request().Header.Del(fiber.HeaderContentEncoding)
		c.Request().SetBody(body)
		return nil
	}
}

// maxEncodings bounds the encodings one body may stack: no client stacks more than two, and each
// layer may cost a decoding of up to the body limit.
const maxEncodings = 3

// decode undoes one content encoding of body, reading at most limit bytes of output.
func decode(enc string, body []byte, limit int) ([]byte, error) {
	var r io.Reader
	var err error
	switch enc {
	case "gzip", "x-gzip":
		r, err = gzip.NewReader(bytes.NewReader(body))
	case "deflate":
		r, err = zlib.NewReader(bytes.NewReader(body))
	case "br":
		r = brotli.NewReader(bytes.NewReader(body))
	default:
		return nil, apierr.MalformedRequest.Msg("the body's Content-Encoding %q is not supported: send gzip, deflate, br or none", enc)
	}
	if err != nil {
		return nil, apierr.MalformedRequest.Msg("the body is not valid %s data", enc)
	}
	out, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	switch {
	case len(out) > limit:
		return nil, apierr.BodyTooLarge.Msg("the request body is too large once decoded (%s): over %d bytes", enc, limit)
	case err != nil:
		return nil, apierr.MalformedRequest.Msg("the body is not valid %s data", enc)
	}
	return out, nil
}
