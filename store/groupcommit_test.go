package store

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkRecordWrites measures durable new-record writes per second, with one writer (the
// latency of a lone request) and with 32 concurrent writers, through three write paths on the
// same store in the same run: the group commit UpdateRecord uses, one db.Update per write (the
// baseline: no sharing), and bbolt's db.Batch (sharing after a 10 ms window).
func BenchmarkRecordWrites(b *testing.B) {
	paths := []struct {
		name  string
		write func(s *Store, fn func(*bolt.Tx) error) error
	}{
		{"group", func(s *Store, fn func(*bolt.Tx) error) error { return s.group.update(fn) }},
		{"group-nolinger", func(s *Store, fn func(*bolt.Tx) error) error { s.group.noLinger = true; return s.group.update(fn) }},
		{"update", func(s *Store, fn func(*bolt.Tx) error) error { return s.db.Update(fn) }},
		{"batch", func(s *Store, fn func(*bolt.Tx) error) error { return s.db.Batch(fn) }},
	}
	for _, writers := range []int{1, 32} {
		for _, p := range paths {
			b.Run(fmt.Sprintf("writers=%d/%s", writers, p.name), func(b *testing.B) {
				s, _ := openTemp(b, newKey(b))
				app := make([]byte, 32)
				var n atomic.Int64
				start := time.Now()
				var wg sync.WaitGroup
				per := b.N/writers + 1
				for range writers {
					wg.Go(func() {
						for range per {
							email := fmt.Sprintf("u%d@example.com", n.Add(1))
							err := p.write(s, func(tx *bolt.Tx) error {
								_, _, err := s.updateOne(tx, time.Now(), app, email, func(r *Record, _ bool) (bool, error) {
									r.UserID, r.PermanentIdentity, r.PublicPermanent = "id", "perm", "pub"
									return true, nil
								})
								return err
							})
							if err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(writers*per)/time.Since(start).Seconds(), "writes/s")
				if st := s.RecordCommits(); st.Commits > 0 {
					b.ReportMetric(float64(st.Writes)/float64(st.Commits), "writes/commit")
					b.ReportMetric(float64(st.Busy.Microseconds())/1000/float64(st.Commits), "ms/commit")
				}
			})
		}
	}
}
