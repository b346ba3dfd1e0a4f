package block

import (
	"encoding/binary"
	"fmt"
)

// AppendVarint appends v as an unsigned LEB128 varint (7 bits per byte,
// least significant group first, 0x80 = more bytes follow).
func AppendVarint(dst []byte, v uint64) []byte {
	return binary.AppendUvarint(dst, v)
}

// ReadVarint decodes a varint at the start of b and returns it with the
// number of bytes read. Overlong or truncated encodings are errors.
func ReadVarint(b []byte) (uint64, int, error) {
	v, n := binary.Uvarint(b)
	switch {
	case n == 0:
		return 0, 0, fmt.Errorf("read varint: %w", ErrTruncated)
	case n < 0:
		return 0, 0, fmt.Errorf("read varint: %w: overflows 64 bits", ErrMalformed)
	case n > 1 && b[n-1] == 0:
		return 0, 0, fmt.Errorf("read varint: %w: non-minimal encoding", ErrMalformed)
	}
	return v, n, nil
}
