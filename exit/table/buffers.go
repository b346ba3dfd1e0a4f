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

// cells are the slices of a batch's rows and results, recycled with its buffers (the same
// reasons, a list as freeBuffers): per batch, a few hundred KiB of slices of pointers.
type cells struct {
	rows [][][]byte   // the batch's rows
	slab [][]byte     // their values, row after row
	flat []fieldOut   // the results, row after row
	out  [][]fieldOut // the results of each row (of flat)
	cts  [][]byte     // the ciphertexts sent
	refs []*fieldOut  // the result of each ciphertext
}

var freeCells = make(chan *cells, 8)

func getCells() *cells {
	select {
	case c := <-freeCells:
		return c
	default:
		return &cells{}
	}
}

// putCells gives c back once its batch is written; its slices are cleared as they are taken
// again.
func putCells(c *cells) {
	select {
	case freeCells <- c:
	default:
	}
}

// grow returns s of length n, cleared, reusing its array when it is big enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}
