package exitserver

import (
	"encoding/binary"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
)

// splitBatch reads a client's body, so it never panics or reads past it; it refuses with
// invalid_body or payload_too_large, never another error; what it accepts is at most
// DecryptBatchItems items that are consecutive, in order, sub-slices of the body, their framing
// and bytes covering the whole body.
func FuzzSplitBatch(f *testing.F) {
	frame := func(items ...string) []byte {
		var b []byte
		for _, it := range items {
			b = append(binary.AppendUvarint(b, uint64(len(it))), it...)
		}
		return b
	}
	for _, seed := range [][]byte{
		frame("abc", "", "defg"), frame(""), nil, {5, 'a'}, {0x80}, {0x80, 0x00},
		{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
		append(frame("x"), 0xff),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		items, err := splitBatch(raw)
		if err != nil {
			var ae *apierr.Error
			require.True(t, errors.As(err, &ae), "an API error: %v", err)
			require.Contains(t, []apierr.Code{apierr.InvalidBody, apierr.PayloadTooLarge}, ae.Code)
			return
		}
		require.LessOrEqual(t, len(items), DecryptBatchItems)
		off := 0
		for i, it := range items { // plain checks: up to 10000 items per input
			n, size := binary.Uvarint(raw[off:])
			if size <= 0 || n != uint64(len(it)) {
				t.Fatalf("item %d: framing says %d bytes (size %d), item has %d", i, n, size, len(it))
			}
			off += size
			if len(it) > 0 && &raw[off] != &it[0] {
				t.Fatalf("item %d is not the body's bytes at %d", i, off)
			}
			off += len(it)
		}
		require.Equal(t, len(raw), off, "the items cover the body")
	})
}
