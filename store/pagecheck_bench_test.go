package store

import (
	"fmt"
	"os"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// BenchmarkOpenPageCheck measures what the page check (checkPages) adds to opening a data file
// of 100,000 identities: one op is one check; it reports the file's size and, measured in the
// same run, bbolt's own open for writing (which rebuilds the freelist by walking the same pages)
// and the ratio of the two. A store's Open runs both.
func BenchmarkOpenPageCheck(b *testing.B) {
	s, path := openTemp(b, newKey(b))
	app := testApp(9)
	const n, batch = 100_000, 2_000
	for start := 0; start < n; start += batch {
		emails := make([]string, batch)
		for i := range emails {
			emails[i] = fmt.Sprintf("user%06d@example.com", start+i)
		}
		_, err := s.UpdateRecords(app.ID, emails, func(i int, r *Record, _ bool) (bool, error) {
			r.UserID, r.PermanentIdentity, r.PublicPermanent = emails[i], fmt.Sprintf("perm-%0300d", i), fmt.Sprintf("pub-%0100d", i)
			return true, nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	var boltOpen time.Duration
	opens := 0
	b.ResetTimer()
	for b.Loop() {
		if err := checkPages(path, os.Getpagesize()); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		start := time.Now()
		db, err := bolt.Open(path, 0o600, &bolt.Options{NoFreelistSync: true, FreelistType: bolt.FreelistMapType})
		if err != nil {
			b.Fatal(err)
		}
		boltOpen += time.Since(start)
		opens++
		db.Close()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(st.Size())/(1<<20), "MiB")
	b.ReportMetric(float64(boltOpen.Microseconds())/float64(opens)/1000, "bbolt-open-ms")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(boltOpen.Nanoseconds()/int64(opens)), "check/bbolt-open")
}
