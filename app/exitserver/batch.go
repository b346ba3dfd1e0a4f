package exitserver

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	"github.com/gofiber/fiber/v2"

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
	// most as large: clear bytes are shorter than their ciphertext, and an error is a few
	// dozen bytes.
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
func (s *Server) decryptBatch(c *fiber.Ctx) error {
	// The body and the answer (clear bytes are shorter than their ciphertexts; an error takes
	// a few dozen bytes), reserved in the memory budget until the answer is written.
	res, err := s.budget.hold(2*bodyBound(c, DecryptBatchBytes)+64<<10, budgetWait)
	if err != nil {
		return err
	}
	defer res.done()
	raw, err := readBatchBody(c)
	if err != nil {
		return err
	}
	items, err := splitBatch(raw)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.KeyLookupTimeout)
	defer cancel()
	keys := s.db.KeyFinder(ctx)
	limits := encryption.WithLimits(encryption.Limits{MaxChunkSize: s.cfg.MaxChunkSize, MaxSimpleSize: DecryptBatchBytes})
	out := batchBuffer(len(raw))[:0]
	for _, item := range items {
		clear, _, err := encryption.Decrypt(keys, item, limits)
		if err == nil {
			out = append(out, batchItemClear)
			out = binary.AppendUvarint(out, uint64(len(clear)))
			out = append(out, clear...)
			continue
		}
		e := apierr.As(classifyDecryptError(err))
		if e == nil || e.Code.Status >= 500 {
			return classifyDecryptError(err)
		}
		out = append(out, batchItemError)
		out = appendString(out, e.Code.Name)
		out = appendString(out, e.Message)
	}
	recycleBatchBuffer(raw)
	raw, items = nil, nil
	c.Set(fiber.HeaderContentType, fiber.MIMEOctetStream)
	// fasthttp closes the reader once the answer is written (or dropped): the reservation is
	// given back then, and the buffer recycled.
	release := res.handOver()
	c.Response().SetBodyStream(&releasingReader{Reader: bytes.NewReader(out), release: func() {
		release()
		clear(out) // clear text must neither linger nor reach another answer
		recycleBatchBuffer(out)
	}}, len(out))
	return nil
}

// batchBuffers recycles the body and answer buffers of decrypt-batch (up to 8 MiB each, within
// the memory budget's reservation): a records run sends thousands of batches, and a fresh
// buffer would be zeroed, then collected, each time.
var batchBuffers sync.Pool

// batchBuffer returns a buffer of n bytes, recycled when one big enough is at hand.
func batchBuffer(n int) []byte {
	if p, ok := batchBuffers.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]byte, n)
}

// recycleBatchBuffer gives b back once nothing refers to it.
func recycleBatchBuffer(b []byte) {
	if cap(b) > 0 {
		batchBuffers.Put(&b)
	}
}

// readBatchBody reads the body up to DecryptBatchBytes, into one buffer of its announced
// length when it has one (growing a buffer from nothing costs more than the decryption of a
// batch of small values).
func readBatchBody(c *fiber.Ctx) ([]byte, error) {
	n := c.Request().Header.ContentLength()
	if n <= 0 {
		return readLimited(requestBody(c), DecryptBatchBytes)
	}
	if n > DecryptBatchBytes {
		return nil, apierr.PayloadTooLarge.Msg("the body is over %d bytes", DecryptBatchBytes)
	}
	raw := batchBuffer(n)
	if _, err := io.ReadFull(requestBody(c), raw); err != nil {
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

// splitBatch cuts a batch body into its items (sub-slices of raw).
func splitBatch(raw []byte) ([][]byte, error) {
	var items [][]byte
	for off := 0; off < len(raw); {
		n, size := binary.Uvarint(raw[off:])
		if size <= 0 {
			return nil, apierr.InvalidBody.Msg("%v: item %d has a bad length at byte %d", errBatchFraming, len(items), off)
		}
		off += size
		if n > uint64(len(raw)-off) {
			return nil, apierr.InvalidBody.Msg("%v: item %d is %d bytes, %d remain", errBatchFraming, len(items), n, len(raw)-off)
		}
		if len(items) == DecryptBatchItems {
			return nil, apierr.PayloadTooLarge.Msg("over %d ciphertexts in one batch", DecryptBatchItems)
		}
		items = append(items, raw[off:off+int(n)])
		off += int(n)
	}
	return items, nil
}
