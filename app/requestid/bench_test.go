package requestid

import "testing"

// BenchmarkNext is the cost of one new request ID, from one goroutine and from all of them at
// once (each ID reads crypto/rand on its own).
func BenchmarkNext(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			New()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				New()
			}
		})
	})
}
