package exitclient

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
)

// Limits the callers keep their batches under; the server's are 10000 items and 8 MiB
// (exitserver.DecryptBatchItems, DecryptBatchBytes), so a batch is never refused for its size.
const (
	BatchItems = 1000
	BatchBytes = 1 << 20
	// BigValue is the size from which a ciphertext goes alone to POST /v1/decrypt (DecryptOne,
	// a stream route without the batch's size limit) instead of into a batch.
	BigValue = 1 << 20
)

// BatchResult is the outcome of one ciphertext of a batch: Clear when Code is empty,
// otherwise the server's error code and message for it.
type BatchResult struct {
	Clear   []byte
	Code    string
	Message string
}

// DecryptBatch decrypts small ciphertexts in one POST /v1/decrypt-batch (retried whole on
// server errors), and returns one result per item, in order. A ciphertext that does not
// decrypt has its code in its result; the error is for the batch as a whole (server
// unreachable after the retries, refused token, a malformed answer); an answer cut short is
// retried as one that never came. The caller keeps
// batches under the server's limits (10000 items, 8 MiB).
func (c *Client) DecryptBatch(ctx context.Context, items [][]byte) ([]BatchResult, error) {
	raw, err := c.sendBatch(ctx, items, nil)
	if err != nil {
		return nil, err
	}
	return ParseBatchAnswer(raw, len(items))
}

// decryptBatchEach is DecryptBatch that hands each result to each, in order, then gives the
// answer's buffer back to answers: a result's Clear is valid only during its call.
func (c *Client) decryptBatchEach(ctx context.Context, items [][]byte, answers *answerBuffers, each func(int, BatchResult)) error {
	raw, err := c.sendBatch(ctx, items, answers)
	if err != nil {
		return err
	}
	defer answers.put(raw)
	res, err := ParseBatchAnswer(raw, len(items))
	if err != nil {
		return err
	}
	for i, r := range res {
		each(i, r)
	}
	return nil
}

// sendBatch sends items in one POST /v1/decrypt-batch and returns the answer, read into a
// buffer of answers.
func (c *Client) sendBatch(ctx context.Context, items [][]byte, answers *answerBuffers) ([]byte, error) {
	// The body is framed as it is sent (EncodeBatch's bytes, without a copy of the items).
	size := int64(0)
	for _, it := range items {
		size += int64(uvarintLen(uint64(len(it))) + len(it))
	}
	// The answer is at most the body's size plus a few dozen bytes per error. One cut short
	// (the server killed mid-answer) is sent again: decrypting twice is harmless.
	limit := size + int64(len(items))*1024 + 4096
	open := func() io.Reader { return &batchReader{items: items} }
	return c.sendReadInto(ctx, http.MethodPost, "/v1/decrypt-batch", "application/octet-stream", size, open, limit, answers)
}

// DecryptOne decrypts one ciphertext through POST /v1/decrypt, for values too big for a batch
// (BigValue and over).
// The error is for the run (the server unreachable past the budget, a refused token); the
// value's own failure is in the result. An answer cut midway is asked for once more: a server
// killed while it answered gives it whole once it is back (the retry waits for it under the
// budget), and a stream the server cuts on purpose (a bad chunk) is cut again, stream_aborted.
func (c *Client) DecryptOne(ctx context.Context, ct []byte) (BatchResult, error) {
	var err error
	for attempt := 1; attempt <= 2; attempt++ {
		var resp *http.Response
		if resp, err = c.send(ctx, http.MethodPost, "/v1/decrypt", "application/octet-stream", ct); err != nil {
			break
		}
		var clear []byte
		clear, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil {
			return BatchResult{Clear: clear}, nil
		}
		if ctx.Err() != nil {
			return BatchResult{}, ctx.Err()
		}
		err = fmt.Errorf("%w: %v", ErrStreamAborted, err)
	}
	var api *APIError
	switch {
	case StopsRun(err), ctx.Err() != nil:
		return BatchResult{}, err
	case errors.As(err, &api):
		return BatchResult{Code: api.Code, Message: api.Message}, nil
	}
	return BatchResult{Code: Code(err), Message: err.Error()}, nil
}

// EncodeBatch frames items as a POST /v1/decrypt-batch body: uvarint(length) || bytes each.
func EncodeBatch(items [][]byte) []byte {
	n := 0
	for _, it := range items {
		n += binary.MaxVarintLen32 + len(it)
	}
	out := make([]byte, 0, n)
	for _, it := range items {
		out = binary.AppendUvarint(out, uint64(len(it)))
		out = append(out, it...)
	}
	return out
}

func uvarintLen(n uint64) int {
	k := 1
	for ; n >= 0x80; n >>= 7 {
		k++
	}
	return k
}

// batchReader reads items framed as EncodeBatch frames them.
type batchReader struct {
	items [][]byte
	cur   []byte // what is left of the current length or item
	item  bool   // cur is an item (the next piece is a length)
	num   [binary.MaxVarintLen64]byte
}

func (r *batchReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.cur) == 0 {
			switch {
			case r.item:
				r.cur, r.item, r.items = r.items[0], false, r.items[1:]
			case len(r.items) > 0:
				r.cur, r.item = binary.AppendUvarint(r.num[:0], uint64(len(r.items[0]))), true
			default:
				if n == 0 {
					return 0, io.EOF
				}
				return n, nil
			}
			continue
		}
		k := copy(p[n:], r.cur)
		r.cur = r.cur[k:]
		n += k
	}
	return n, nil
}

// errBadAnswer reports a decrypt-batch answer that does not keep to its framing.
var errBadAnswer = errors.New("decrypt batch: malformed answer")

// ParseBatchAnswer reads a POST /v1/decrypt-batch answer that must hold want items. Clear
// bytes are sub-slices of raw.
func ParseBatchAnswer(raw []byte, want int) ([]BatchResult, error) {
	out := make([]BatchResult, 0, want)
	off := 0
	next := func() ([]byte, bool) {
		n, size := binary.Uvarint(raw[off:])
		if size <= 0 || n > uint64(len(raw)-off-size) {
			return nil, false
		}
		off += size
		b := raw[off : off+int(n) : off+int(n)]
		off += int(n)
		return b, true
	}
	for len(out) < want {
		if off >= len(raw) {
			return nil, fmt.Errorf("%w: %d items of %d", errBadAnswer, len(out), want)
		}
		status := raw[off]
		off++
		var r BatchResult
		switch status {
		case 0:
			clear, ok := next()
			if !ok {
				return nil, fmt.Errorf("%w: item %d cut short", errBadAnswer, len(out))
			}
			r.Clear = clear
		case 1:
			code, ok1 := next()
			msg, ok2 := next()
			if !ok1 || !ok2 || len(code) == 0 {
				return nil, fmt.Errorf("%w: item %d cut short", errBadAnswer, len(out))
			}
			r.Code, r.Message = string(code), string(msg)
		default:
			return nil, fmt.Errorf("%w: item %d has status %d", errBadAnswer, len(out), status)
		}
		out = append(out, r)
	}
	if off != len(raw) {
		return nil, fmt.Errorf("%w: %d bytes after the last item", errBadAnswer, len(raw)-off)
	}
	return out, nil
}
