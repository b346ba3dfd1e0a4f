package records

import "slices"

// AppendCiphertext is DecodeCiphertext appending the bytes to dst: a caller decoding many
// values into one buffer (exit decrypt-table's batches) spares an allocation per value.
func AppendCiphertext(dst []byte, encoding string, text []byte) ([]byte, error) {
	if len(text) > arenaChunk/4 { // the arena would not hand out dst's room for it
		out, err := decodeCiphertextTo(nil, encoding, text)
		if err != nil {
			return dst, err
		}
		return append(dst, out...), nil
	}
	n := len(dst)
	dst = slices.Grow(dst, len(text)) // the bytes are never more than their text
	mem := &arena{chunk: dst[n:n:cap(dst)]}
	out, err := decodeCiphertextTo(mem, encoding, text)
	if err != nil {
		return dst[:n], err
	}
	return dst[:n+len(out)], nil
}
