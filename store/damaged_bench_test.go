package store

import (
	"testing"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkGuardedView measures what the guard (damaged.go: SetPanicOnFault set and restored, a
// deferred recover, the damage note) adds to a read transaction: guarded runs Store.view,
// bare runs bbolt's View, each reading one record of a real store.
func BenchmarkGuardedView(b *testing.B) {
	s, _ := openTemp(b, newKey(b))
	app := testApp(1)
	if _, err := s.UpdateRecord(app.ID, "a@example.com", func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil }); err != nil {
		b.Fatal(err)
	}
	key := recordKey(app.ID, "a@example.com")
	read := func(tx *bolt.Tx) error {
		if tx.Bucket(bucketRecords).Get(key) == nil {
			return ErrNotFound
		}
		return nil
	}
	b.Run("guarded", func(b *testing.B) {
		for b.Loop() {
			if err := s.view(read); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			if err := s.db.View(read); err != nil {
				b.Fatal(err)
			}
		}
	})
}
