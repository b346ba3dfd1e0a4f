package exitserver

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
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

// A batch's reservation covers what it holds at its worst: its body, the slice of its items
// and an answer in which every item failed, whatever the error (each message is cut to the
// bound it is reserved at).
func TestBatchReservationCoversTheWorstAnswer(t *testing.T) {
	t.Parallel()
	s := New(exitfake.New(), Config{})
	for _, body := range [][]byte{
		make([]byte, DecryptBatchItems),         // empty items: unsupported_format each
		bytes.Repeat([]byte{3, 11, 0, 1}, 2000), // 3-byte items of format 11: truncated_data each
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest("POST", "/v1/decrypt-batch", bytes.NewReader(body)))
		require.Equal(t, 200, rec.Code, "%.200s", rec.Body.Bytes())
		items, err := splitBatch(body)
		require.NoError(t, err)
		held := int64(len(body)) + int64(rec.Body.Len()) + int64(len(items))*sliceHeader
		require.GreaterOrEqual(t, 2*int64(len(body))+batchItemsReserve(len(items)), held)
		require.LessOrEqual(t, int64(rec.Body.Len()), batchAnswerBound(int64(len(body)), int64(len(items))))
	}
	for _, c := range apierr.ExitCatalog {
		require.LessOrEqual(t, len(c.Name), batchCodeMax, c.Name)
	}
	long := appendBatchError(nil, apierr.KeyNotFound.Msg("%s", strings.Repeat("é", 400)))
	require.LessOrEqual(t, len(long), batchErrorMax)
	require.True(t, utf8.Valid(long[len(long)-batchMessageMax+10:]), "a message is cut between characters")
}
