package encryption

import (
	"fmt"
	"io"
)

// bufferSteps is a growth rule for a chunk buffer: the sizes it takes (each
// capped at the declared chunk size) before the chunk size itself. A buffer
// grows to the next size only once more data actually arrived, so a header
// declaring a huge chunk costs nothing until the data is there, and growth
// costs at most one copy of each step.
type bufferSteps []int

var (
	// plainSteps is the rule of a decrypter reading in the caller's goroutine,
	// with a single chunk buffer: a small stream (a 1 KiB file in 1 MiB
	// chunks) allocates 4 KiB, not a chunk, and a stream allocates at most
	// the steps plus one chunk, whatever the pattern of the source's reads
	// or writes.
	plainSteps = bufferSteps{4 << 10, 80 << 10, 320 << 10}
	// readAheadSteps is the rule of the read-ahead's three chunk buffers
	// (WithReadAhead): one 64 KiB step, then the chunk size, so the buffers
	// of a server streaming large files are copied once, not three times,
	// on their way to a full chunk.
	readAheadSteps = bufferSteps{64 << 10}
)

// grow returns buf if it holds at least need bytes, else a buffer of the
// smallest step that does (the chunk size past the last step, never beyond
// it) with the first keep bytes of buf copied over.
func (s bufferSteps) grow(buf []byte, need, keep, size int) []byte {
	target := size
	for _, step := range s {
		if need <= step {
			target = min(size, step)
			break
		}
	}
	if len(buf) >= target {
		return buf
	}
	grown := getChunkBuffer(target)
	copy(grown, buf[:keep])
	return grown
}

// fillChunk reads up to size bytes into buf from offset off, growing buf
// by the rule steps as data arrives, and returns the buffer and the bytes in
// it; fewer than size means the source ended. The first off bytes count as
// read: they were put there (the header of formats 4 and 8), or will be once
// the chunk is taken (the read-ahead leaves them to the decrypting side), and
// a buffer shorter than off is grown to hold them.
func fillChunk(src io.Reader, buf []byte, off, size int, steps bufferSteps) ([]byte, int, error) {
	n := off
	for n < size {
		if n >= len(buf) {
			buf = steps.grow(buf, n+1, min(n, len(buf)), size)
		}
		m, err := io.ReadFull(src, buf[n:])
		n += m
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return buf, n, nil
		}
		if err != nil {
			return buf, n, fmt.Errorf("read encrypted stream: %w", err)
		}
	}
	return buf, n, nil
}
