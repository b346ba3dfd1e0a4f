package table

// freeBuffers recycles the buffers of batches (source values, decoded ciphertexts), each of
// memChunk bytes unless a value needs more: a run moves gigabytes through them, and fresh ones
// would each be zeroed, then collected. A list rather than a sync.Pool, which the garbage
// collector empties at each cycle (often, under the run's soft memory limit). It holds at most
// what a few batches use.
var freeBuffers = make(chan []byte, 16)

// getBuffer returns an empty buffer of at least n bytes of capacity.
func getBuffer(n int) []byte {
	select {
	case b := <-freeBuffers:
		if cap(b) >= n {
			return b[:0]
		}
	default:
	}
	return make([]byte, 0, max(n, memChunk))
}

// putBuffer gives b back: nothing may refer to its bytes any more. One bigger than memChunk
// (a big value's) is left to the garbage collector.
func putBuffer(b []byte) {
	if cap(b) != memChunk {
		return
	}
	select {
	case freeBuffers <- b:
	default:
	}
}
