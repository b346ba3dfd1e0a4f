package server

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
)

func compress(t *testing.T, enc string, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "br":
		w = brotli.NewWriter(&buf)
	}
	_, err := w.Write(data)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return buf.Bytes()
}

// A compressed body is decoded once, before the handlers, under server.body_limit: a small
// gzip body that decodes to far more than the limit (a decompression bomb) is 413, where
// fiber's Ctx.Body decoded it whole into memory (200 kB of gzip made a gigabyte).
func TestCompressedBodiesAreBoundedByTheBodyLimit(t *testing.T) {
	t.Parallel()
	s, _ := newTestServer(t, nil) // body limit 2048
	s.App.Post("/echo", func(c *fiber.Ctx) error {
		return c.Send(c.Body())
	})
	send := func(enc string, body []byte) (*http.Response, string) {
		req := httptest.NewRequest(http.MethodPost, "/echo", bytes.NewReader(body))
		req.Header.Set("Content-Encoding", enc)
		resp, err := s.App.Test(req, -1)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp, string(raw)
	}
	plain := []byte(`{"email": "a@example.com"}`)
	for _, enc := range []string{"gzip", "deflate", "br"} {
		resp, body := send(enc, compress(t, enc, plain))
		require.Equal(t, http.StatusOK, resp.StatusCode, enc)
		require.Equal(t, string(plain), body, "%s: decoded", enc)

		bomb := compress(t, enc, bytes.Repeat([]byte("a"), 1<<20))
		require.Less(t, len(bomb), 2048, "%s: the compressed body is under the limit", enc)
		resp, body = send(enc, bomb)
		require.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode, enc)
		require.Contains(t, body, `"code":"body_too_large"`)
	}
	resp, body := send("gzip, br", compress(t, "br", compress(t, "gzip", plain)))
	require.Equal(t, http.StatusOK, resp.StatusCode, "two encodings, undone last first")
	require.Equal(t, string(plain), body)

	resp, body = send("gzip, gzip, gzip, gzip", plain)
	require.Equal(t, http.StatusBadRequest, resp.StatusCode, "four stacked encodings: %s", body)
	require.Contains(t, body, "at most 3")

	resp, body = send("gzip", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, "an empty body has nothing to decode: %s", body)

	for enc, data := range map[string][]byte{"gzip": plain, "zstd": plain, "compress": plain} {
		resp, body := send(enc, data)
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, enc)
		require.Contains(t, body, `"code":"malformed_request"`, enc)
		require.True(t, strings.Contains(body, "not valid") || strings.Contains(body, "not supported"), body)
	}
}
