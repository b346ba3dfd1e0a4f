package exitserver

import (
	"net/http"
	"strings"

	"github.com/idvault/idvault/app/apierr"
)

// refuseContentEncoding answers 400 malformed_request to a request whose body declares a
// Content-Encoding other than identity. The exit server reads every body as sent (ciphertexts
// are random bytes, which do not compress; decrypt streams them as they arrive): without this
// check a gzip-compressed ciphertext was read as an unknown format and a compressed import body
// as invalid JSON, errors that send the client looking in the wrong place. A request without a
// body (Content-Length: 0, such as a GET from a client that always says gzip) passes.
func refuseContentEncoding(r *http.Request) error {
	header := strings.Join(r.Header.Values("Content-Encoding"), ",")
	// ContentLength is the announced length, -1 for a chunked body, 0 when there is none.
	if header == "" || r.ContentLength == 0 {
		return nil
	}
	for enc := range strings.SplitSeq(header, ",") {
		if enc = strings.ToLower(strings.TrimSpace(enc)); enc != "" && enc != "identity" {
			return apierr.MalformedRequest.Msg("the body's Content-Encoding %q is not supported: the exit server reads bodies as sent; send it uncompressed", enc)
		}
	}
	return nil
}
