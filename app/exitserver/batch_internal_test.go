package exitserver

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

// decrypt-batch recycles its buffers between requests; the clear bytes an answer held are
// wiped before its buffer goes back, so they neither linger in memory nor can reach another
// answer.
func TestRecycledBatchBuffersHoldNoClearText(t *testing.T) {
	db := exitfake.New()
	who := db.AddImportedUser()
	s := New(db, Config{})

	clear := make([]byte, 64)
	_, _ = rand.Read(clear)
	ct, err := db.Encrypt(who, encryption.V10, clear, encryption.EncryptOptions{})
	require.NoError(t, err)
	var body []byte
	for range 50 {
		body = binary.AppendUvarint(body, uint64(len(ct)))
		body = append(body, ct...)
	}
	for range 20 {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/decrypt-batch", bytes.NewReader(body)))
		resp := rec.Result()
		answer, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, 200, resp.StatusCode, "%s", answer)
		require.True(t, bytes.Contains(answer, clear), "the answer holds the clear bytes")
		resp.Body.Close()
	}
	seen := 0
	for {
		p, ok := batchBuffers.Get().(*[]byte)
		if !ok {
			break
		}
		seen++
		require.False(t, bytes.Contains((*p)[:cap(*p)], clear), "a recycled buffer still holds clear text")
	}
	t.Logf("%d recycled buffers looked at", seen)
}
