package outfiles

import (
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkCheckOutputNames is the up-front name check of exit decrypt on a tree of 100,000
// files in 1,000 directories: what it adds before the first file is sent.
func BenchmarkCheckOutputNames(b *testing.B) {
	rels := make([]string, 100_000)
	for i := range rels {
		rels[i] = filepath.Join("data", fmt.Sprintf("dir-%03d", i%1000), fmt.Sprintf("Ciphertext-%06d.bin", i))
	}
	for b.Loop() {
		if err := CheckNames(rels, "", false); err != nil {
			b.Fatal(err)
		}
	}
}
