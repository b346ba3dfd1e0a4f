package exitserver

import (
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/apierr"
)

// refuseContentEncoding answers 400 malformed_request to a request whose body declares a
// Content-Encoding other than identity. The exit server reads every body as sent (ciphertexts
// are random bytes, which do not compress; decrypt streams them as they arrive): without this
// check a gzip-compressed ciphertext was read as an unknown format and a compressed import body
// as invalid JSON, errors that send the client looking in the wrong place. A request without a
// body (Content-Length: 0, such as a GET from a client that always says gzip) passes.
func refuseContentEncoding(c *fiber.Ctx) error {
	header := c.Request().Header.Peek(fiber.HeaderContentEncoding)
	// fasthttp's ContentLength: the announced length, or -1 for a chunked body; a request that
	// announces neither has none.
	if n := c.Request().Header.ContentLength(); len(header) == 0 || n == 0 || n < -1 {
		return c.Next()
	}
	for enc := range strings.SplitSeq(string(header), ",") {
		if enc = strings.ToLower(strings.TrimSpace(enc)); enc != "" && enc != "identity" {
			return apierr.MalformedRequest.Msg("the body's Content-Encoding %q is not supported: the exit server reads bodies as sent; send it uncompressed", enc)
		}
	}
	return c.Next()
}
