package records

import "sync"

// arena hands out byte slices from shared chunks, so that the many small values of a batch
// (records, ciphertexts, clear values) cost a few allocations instead of one each. A slice
// stays valid as long as anything refers to its chunk, or until release.
type arena struct {
	chunk []byte
	used  [][]byte // the chunks handed out since the last detach or release
}

const arenaChunk = 64 << 10

// chunks recycles arena chunks: a run of decrypt-records writes about a gigabyte through
// arenas, and fresh chunks would each be zeroed and collected.
var chunks = sync.Pool{New: func() any { return new([arenaChunk]byte) }}

// alloc returns a slice of n bytes (zero length, capacity n) and keeps it in the arena.
func (a *arena) alloc(n int) []byte {
	if a == nil || n > arenaChunk/4 {
		return make([]byte, 0, n)
	}
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = chunks.Get().(*[arenaChunk]byte)[:0]
		a.used = append(a.used, a.chunk)
	}
	s := a.chunk[len(a.chunk) : len(a.chunk) : len(a.chunk)+n]
	a.chunk = a.chunk[:len(a.chunk)+n]
	return s
}

// copy returns a copy of p from the arena.
func (a *arena) copy(p []byte) []byte { return append(a.alloc(len(p)), p...) }

// detach hands the chunks used so far to the caller (to release once nothing refers to
// them), and makes the arena start a new chunk.
func (a *arena) detach() [][]byte {
	used := a.used
	a.chunk, a.used = nil, nil
	return used
}

// releaseChunks gives chunks back for reuse: nothing may refer to them any more.
func releaseChunks(used [][]byte) {
	for _, c := range used {
		chunks.Put((*[arenaChunk]byte)(c[:arenaChunk]))
	}
}
