package exitclient_test

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
)

// ParseBatchAnswer reads what a server sent, so it never panics or reads past the answer; what it
// accepts is exactly want items, every failed item with a code, and every clear value capped at
// its own length (an append to one can never overwrite the next item in the shared answer). An
// answer it accepts is the same answer once written again in the documented framing.
func FuzzParseBatchAnswer(f *testing.F) {
	ok := func(clear string) []byte { return binary.AppendUvarint([]byte{0}, uint64(len(clear))) }
	failed := func(code, msg string) []byte {
		b := binary.AppendUvarint([]byte{1}, uint64(len(code)))
		b = append(b, code...)
		return append(binary.AppendUvarint(b, uint64(len(msg))), msg...)
	}
	seeds := []struct {
		raw  []byte
		want int
	}{
		{append(ok("hello"), "hello"...), 1},
		{append(append(ok("a"), 'a'), failed("key_not_found", "no key")...), 2},
		{failed("", "empty code"), 1},
		{[]byte{0, 5, 'a'}, 1},                                                     // cut short
		{[]byte{2, 0}, 1},                                                          // unknown status
		{append(ok(""), 0, 0), 1},                                                  // bytes after the last item
		{[]byte{0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, 1}, // huge length
		{nil, 0},
	}
	for _, s := range seeds {
		f.Add(s.raw, uint16(s.want))
	}
	f.Fuzz(func(t *testing.T, raw []byte, want uint16) {
		n := int(want % 64)
		orig := bytes.Clone(raw)
		out, err := exitclient.ParseBatchAnswer(raw, n)
		require.Equal(t, orig, raw, "the answer is only read")
		if err != nil {
			require.Nil(t, out)
			return
		}
		require.Len(t, out, n)
		var again []byte
		for _, r := range out {
			if r.Code == "" {
				require.Equal(t, len(r.Clear), cap(r.Clear), "a clear value ends where its item ends")
				again = append(binary.AppendUvarint(append(again, 0), uint64(len(r.Clear))), r.Clear...)
				continue
			}
			require.Nil(t, r.Clear)
			again = append(binary.AppendUvarint(append(again, 1), uint64(len(r.Code))), r.Code...)
			again = append(binary.AppendUvarint(again, uint64(len(r.Message))), r.Message...)
		}
		if canonical(raw) {
			require.True(t, bytes.Equal(raw, again), "written again: %x", again)
		} else {
			require.LessOrEqual(t, len(again), len(raw), "a longer length encoding only adds bytes")
		}
	})
}

// canonical reports whether every uvarint a well-formed answer could hold is written in its
// shortest form: Go's binary.Uvarint also reads padded encodings (0x80 0x00 for 0), which the
// server never writes and which re-encode shorter.
func canonical(raw []byte) bool {
	for i := 0; i+1 < len(raw); i++ {
		if raw[i] >= 0x80 && raw[i+1] == 0 {
			return false
		}
	}
	return true
}
