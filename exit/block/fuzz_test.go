package block

import (
	"bytes"
	"testing"
)

// FuzzParseBlock parses arbitrary bytes: never a panic, and whatever parses
// re-serializes to the same bytes, payload included.
func FuzzParseBlock(f *testing.F) {
	for _, vec := range hashVectors() {
		blk := New(Hash(arr32("trustchain id")), vec.action(), vec.author)
		f.Add(blk.Serialize())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		blk, err := Parse(data)
		if err != nil {
			return
		}
		if !bytes.Equal(blk.Serialize(), data) {
			t.Fatal("block does not re-serialize to its input")
		}
		a, err := blk.Action()
		if err != nil {
			return
		}
		if a.Nature() != blk.Nature {
			t.Fatalf("nature %v parsed as %v", blk.Nature, a.Nature())
		}
		if !bytes.Equal(a.AppendPayload(nil), blk.Payload) {
			t.Fatal("payload does not re-serialize to its input")
		}
	})
}
