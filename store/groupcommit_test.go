package store

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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

// BenchmarkIdentityRecordWrites is the group commit of BenchmarkRecordWrites (32 writers) with
// records shaped as a new permanent identity's (Tanker's test vectors: a secret identity of 688
// bytes and a public one of 180, and a UUID), under random emails, in a store already holding
// 20,000 of them. BenchmarkRecordWrites' records are a few bytes under increasing emails, so many
// share a leaf page; here, as for new identities, each new record lands in a leaf of its own, and
// a commit writes its leaf, often a split's second leaf, and the branch above. It reports the
// pages a commit wrote and bbolt's time writing and syncing them (CommitStats.Disk) beside the
// writes per second, and the data file's size per record, with the identities packed (as the store
// writes them) and unpacked (the layout before, the baseline), in the same run.
//
// "restarted" is "packed" in a store closed after its 20,000 records, its pages dropped from the
// page cache, and opened again: a server started again on a data file not in the cache (after a
// reboot, or its pages evicted).
func BenchmarkIdentityRecordWrites(b *testing.B) {
	b.Run("packed", func(b *testing.B) { identityRecordWrites(b, true, false) })
	b.Run("unpacked", func(b *testing.B) { identityRecordWrites(b, false, false) })
	b.Run("restarted", func(b *testing.B) { identityRecordWrites(b, true, true) })
}

func identityRecordWrites(b *testing.B, packed, restart bool) {
	const writers, stored = 32, 20_000
	mk := newKey(b)
	s, path := openTemp(b, mk)
	s.noPack = !packed
	app := testApp(7).ID
	ids := testIdentities(b)
	secret, public := ids["permanent"], ids["publicpermanent"]
	fill := func(r *Record) {
		r.UserID, r.PermanentIdentity, r.PublicPermanent = "7f1c3a2e-5b6d-4e8f-9a0b-1c2d3e4f5a6b", secret, public
	}
	email := func() string { return fmt.Sprintf("%016x@example.com", rand.Uint64()) }
	for range stored / 1000 {
		emails := make([]string, 1000)
		for i := range emails {
			emails[i] = email()
		}
		_, err := s.UpdateRecords(app, emails, func(_ int, r *Record, _ bool) (bool, error) { fill(r); return true, nil })
		if err != nil {
			b.Fatal(err)
		}
	}
	if restart {
		require.NoError(b, s.Close())
		dropCache(b, path)
		var err error
		s, err = Open(Options{Path: path, MasterKey: mk})
		require.NoError(b, err)
		b.Cleanup(func() { s.Close() })
	}
	before := s.RecordCommits()
	b.ResetTimer()
	start := time.Now()
	per := b.N/writers + 1
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range per {
				if _, err := s.UpdateRecord(app, email(), func(r *Record, _ bool) (bool, error) { fill(r); return true, nil }); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.ReportMetric(float64(writers*per)/time.Since(start).Seconds(), "writes/s")
	var size int64
	if err := s.db.View(func(tx *bolt.Tx) error { size = tx.Size(); return nil }); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size)/float64(stored+writers*per), "file-bytes/record")
	st := s.RecordCommits()
	if st = st.Sub(before); st.Commits > 0 {
		n := float64(st.Commits)
		b.ReportMetric(float64(st.Writes)/n, "writes/commit")
		b.ReportMetric(float64(st.Busy.Microseconds())/1000/n, "ms/commit")
		b.ReportMetric(float64(st.Pages)/n, "pages/commit")
		b.ReportMetric(float64(st.Disk.Microseconds())/1000/n, "disk-ms/commit")
	}
}
