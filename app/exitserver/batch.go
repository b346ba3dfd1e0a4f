package exitserver

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/exit/encryption"
)

// Limits of POST /v1/decrypt-batch, fixed rather than configured: a batch is for many small
// values (database columns), and a value too big for it goes to POST /v1/decrypt, which
// streams.
const (
	// DecryptBatchItems is the most ciphertexts one batch may carry.
	DecryptBatchItems = 10000
	// DecryptBatchBytes is the largest batch body, framing included (8 MiB). The answer is at
	// most as large and batchErrorMax per item (batchAnswerBound).
	DecryptBatchBytes = 8 << 20
)

// Item status bytes of a batch answer.
const (
	batchItemClear = 0
	batchItemError = 1
)

// decryptBatch is POST /v1/decrypt-batch: many small ciphertexts in one request, each framed
// as uvarint(length) || bytes; the answer holds, in the same order, one entry per item:
// 0x00 uvarint(length) clear bytes, or 0x01 uvarint(length) code uvarint(length) message,
// with the code and message the item would have had on POST /v1/decrypt. An item whose error
// is the server's (database_unavailable, internal_error) fails the whole batch with that
// answer, so that the client retries it.
func (s *Server) decryptBatch(x *exchange) error {
	// Reserved in the memory budget until the answer is written: the body and as much again
	// for the answer's clear bytes, then, once the items are counted, their slice and room for
	// each to fail (batchAnswerBound).
	held, err := s.budget.reserve(2*bodyBound(x, DecryptBatchBytes), budgetWait)
	if err != nil {
		return err
	}
	defer held.release()
	raw, err := readBatchBody(x)
	if err != nil {
		return err
	}
	n, err := eachBatchItem(raw, nil)
	if err != nil {
		return err
	}
	heldItems, err := s.budget.reserve(batchItemsReserve(n), budgetWait)
	if err != nil {
		return err
	}
	defer heldItems.release()
	items, err := splitBatch(raw)
	if err != nil {
		return err
	}
	ctx := s.lookupContext()
	defer ctx.cancel()
	keys := s.db.KeyFinder(ctx)
	limits := encryption.WithLimits(encryption.Limits{MaxChunkSize: s.cfg.MaxChunkSize, MaxSimpleSize: DecryptBatchBytes})
	// Allocated at its bound, so that appending never grows it past what was reserved.
	out := batchBuffers.get(int(batchAnswerBound(int64(len(raw)), int64(len(items)))))[:0]
	hi := 0 // how far clear bytes may have been written
	defer func() {
		clear(out[:hi]) // clear text must neither linger nor reach another answer
		batchBuffers.put(out)
	}()
	if out, hi, err = appendBatchItems(out, keys, items, limits); err != nil {
		return err
	}
	batchBodies.put(raw)
	raw, items = nil, nil
	return x.send(http.StatusOK, octetStream, out)
}

// appendBatchItems appends to out, allocated at the answer's bound, the entry of each item, and
// returns it with how far in its spare room clear bytes may have been written (hi), for the
// caller to wipe, also when it fails. An item whose error is the server's stops it with that
// error, for the whole batch.
//
// Each item opens into the answer's spare room, past the longest length prefix it may need,
// and moves back once its length is known: no buffer per item. The bound leaves that room (a
// clear item takes less than its ciphertext and batchErrorMax).
func appendBatchItems(out []byte, keys encryption.KeyFinder, items [][]byte, limits encryption.Option) ([]byte, int, error) {
	hi := 0
	for _, item := range items {
		at := min(len(out)+1+binary.MaxVarintLen64, cap(out))
		hi = max(hi, min(at+len(item), cap(out)))
		opened, _, err := encryption.AppendDecrypt(out[:at], keys, item, limits)
		if err == nil {
			plain := opened[at:]
			out = append(out, batchItemClear)
			out = binary.AppendUvarint(out, uint64(len(plain)))
			out = append(out, plain...) // a move to the left within the buffer
			hi = max(hi, len(out))
			continue
		}
		e := apierr.As(classifyDecryptError(err))
		if e == nil || e.Code.Status >= 500 {
			return out, hi, classifyDecryptError(err)
		}
		out = appendBatchError(out, e)
		hi = max(hi, len(out))
	}
	return out, hi, nil
}

// Bounds of a batch answer's error item: its status byte, then its code and message, each
// after its uvarint length. Messages are cut to batchMessageMax bytes (none of the catalogue's
// is that long), so that the answer's size is known before the items are decrypted.
const (
	batchCodeMax    = 32
	batchMessageMax = 256
	batchErrorMax   = 1 + 1 + batchCodeMax + 2 + batchMessageMax
	// sliceHeader is the size of one item's slice in splitBatch's result.
	sliceHeader = 24
)

// batchItemsReserve is what n items add to a batch's reservation beside its body and as much
// again: their slice, and room in the answer for each to fail.
func batchItemsReserve(n int) int64 {
	return int64(n) * (batchErrorMax + sliceHeader)
}

// batchAnswerBound bounds the answer to a body of size bytes holding items items: a clear item
// takes no more than its framed ciphertext took in the body and one byte (clear bytes are
// shorter than their ciphertext), an error item batchErrorMax.
func batchAnswerBound(size, items int64) int64 {
	return size + items*batchErrorMax
}

// appendBatchError appends an error item, its message cut to batchMessageMax bytes.
func appendBatchError(out []byte, e *apierr.Error) []byte {
	msg := e.Message
	if len(msg) > batchMessageMax {
		msg = strings.ToValidUTF8(msg[:batchMessageMax], "")
	}
	out = append(out, batchItemError)
	out = appendString(out, e.Code.Name[:min(len(e.Code.Name), batchCodeMax)])
	return appendString(out, msg)
}

// batchBuffers and batchBodies recycle the answer and body buffers of decrypt-batch (up to
// 8 MiB and about as much again, within the memory budget's reservation), apart since an
// answer's is the larger: a records run sends thousands of batches, and a fresh buffer would
// be zeroed, then collected, each time.
var batchBuffers, batchBodies bufferPool

// bufferPool recycles byte buffers.
type bufferPool struct{ sync.Pool }

// get returns a buffer of n bytes, recycled when one big enough is at hand.
func (p *bufferPool) get(n int) []byte {
	if b, ok := p.Get().(*[]byte); ok && cap(*b) >= n {
		return (*b)[:n]
	}
	return make([]byte, n)
}

// put gives b back once nothing refers to it.
func (p *bufferPool) put(b []byte) {
	if cap(b) > 0 {
		p.Put(&b)
	}
}

// readBatchBody reads the body up to DecryptBatchBytes, into one buffer of its announced
// length when it has one (growing a buffer from nothing costs more than the decryption of a
// batch of small values).
func readBatchBody(x *exchange) ([]byte, error) {
	n := x.r.ContentLength
	if n <= 0 {
		return readLimited(x, DecryptBatchBytes)
	}
	if n > DecryptBatchBytes {
		return nil, apierr.PayloadTooLarge.Msg("the body is over %d bytes", DecryptBatchBytes)
	}
	raw := batchBodies.get(int(n))
	if _, err := io.ReadFull(x, raw); err != nil {
		return nil, apierr.InvalidBody.Msg("reading the body: %v", err)
	}
	return raw, nil
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// errBatchFraming is why a batch body is not a sequence of framed items.
var errBatchFraming = errors.New("want a sequence of uvarint(length) || ciphertext")

// splitBatch cuts a batch body into its items (sub-slices of raw), in a slice of their number.
func splitBatch(raw []byte) ([][]byte, error) {
	n, err := eachBatchItem(raw, nil)
	if err != nil {
		return nil, err
	}
	items := make([][]byte, 0, n)
	_, err = eachBatchItem(raw, func(item []byte) { items = append(items, item) })
	return items, err
}

// eachBatchItem calls f (unless nil) with each item of a batch body, and returns their number.
func eachBatchItem(raw []byte, f func([]byte)) (int, error) {
	count := 0
	for off := 0; off < len(raw); {
		n, size := binary.Uvarint(raw[off:])
		if size <= 0 {
			return 0, apierr.InvalidBody.Msg("%v: item %d has a bad length at byte %d", errBatchFraming, count, off)
		}
		off += size
		if n > uint64(len(raw)-off) {
			return 0, apierr.InvalidBody.Msg("%v: item %d is %d bytes, %d remain", errBatchFraming, count, n, len(raw)-off)
		}
		if count == DecryptBatchItems {
			return 0, apierr.PayloadTooLarge.Msg("over %d ciphertexts in one batch", DecryptBatchItems)
		}
		if f != nil {
			f(raw[off : off+int(n)])
		}
		count++
		off += int(n)
	}
	return count, nil
}
