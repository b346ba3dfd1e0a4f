package table

import "sync"

// buffers recycles the large buffers of batches (source values, decoded ciphertexts, COPY
// streams): a run moves gigabytes through them, and fresh ones would each be zeroed, then
// collected by a garbage collector held under a soft memory limit.
var buffers sync.Pool

// getBuffer returns an empty buffer of at least n bytes of capacity.
func getBuffer(n int) []byte {
	if p, ok := buffers.Get().(*[]byte); ok && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// putBuffer gives b back: nothing may refer to its bytes any more.
func putBuffer(b []byte) {
	if cap(b) == 0 {
		return
	}
	buffers.Put(&b)
}
