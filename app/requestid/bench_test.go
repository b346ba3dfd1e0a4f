package requestid

import "testing"

// BenchmarkNext is the cost of one new request ID, from one goroutine and from all of them at
// once (the random block is shared under a lock).
func BenchmarkNext(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ids.next()
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				ids.next()
			}
		})
	})
}
