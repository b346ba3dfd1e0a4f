package exitclient

// answerBuffers recycles the buffers decrypt-batch answers are read into, for a caller done
// with an answer's clear bytes once it has handed them on (Pool.DecryptEach): a run sends
// thousands of answers of up to a MiB, and a new buffer each time is zeroed, then collected.
// A buffer is cleared as it comes back. A nil *answerBuffers allocates every buffer.
type answerBuffers struct{ free chan []byte }

// answerBufferSize is the capacity of a recycled buffer: the answer to a batch of BatchBytes
// of ciphertexts (clear items are shorter than their ciphertexts) with room to spare.
const answerBufferSize = BatchBytes + 64<<10

func newAnswerBuffers(n int) *answerBuffers { return &answerBuffers{free: make(chan []byte, n)} }

// get returns a buffer of n bytes.
func (a *answerBuffers) get(n int) []byte {
	if a == nil {
		return make([]byte, n)
	}
	select {
	case b := <-a.free:
		if cap(b) >= n {
			return b[:n]
		}
	default:
	}
	return make([]byte, n, max(n, answerBufferSize))
}

// put gives back a buffer of get once nothing refers to its bytes, clearing them.
func (a *answerBuffers) put(b []byte) {
	if a == nil {
		return
	}
	clear(b)
	if cap(b) != answerBufferSize {
		return
	}
	select {
	case a.free <- b[:0]:
	default:
	}
}
