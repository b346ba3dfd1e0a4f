package gen

import (
	"encoding/binary"
	"math/rand/v2"

	"golang.org/x/crypto/blake2b"
)

// itemRNG returns the random source of one generated item: ChaCha8 keyed by
// H_32(seed || label || index). Every item draws only from its own source, so items can be
// made in any order, on any number of cores, and the dump stays byte-identical for a seed.
func itemRNG(seed uint64, label string, index int) *rng {
	h, _ := blake2b.New256(nil)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(label))
	h.Write([]byte{0})
	binary.LittleEndian.PutUint64(b[:], uint64(index))
	h.Write(b[:])
	var key [32]byte
	h.Sum(key[:0])
	return &rng{c: rand.NewChaCha8(key)}
}

// rng is an io.Reader of deterministic bytes with a few helpers.
type rng struct{ c *rand.ChaCha8 }

func (r *rng) Read(p []byte) (int, error) { return r.c.Read(p) }

// intn returns a value in [0, n) (0 when n <= 0).
func (r *rng) intn(n int) int {
	if n <= 0 {
		return 0
	}
	return int(r.c.Uint64() % uint64(n))
}

// chance returns true with probability percent/100.
func (r *rng) chance(percent int) bool { return r.intn(100) < percent }

func (r *rng) bytes(n int) []byte {
	b := make([]byte, n)
	_, _ = r.c.Read(b)
	return b
}
