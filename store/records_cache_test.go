package store

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// withAndWithoutCache runs test on a store with the record cache on (the default) and on one
// with it off (Options.RecordCacheBytes < 0): what the reads answer is the same either way.
func withAndWithoutCache(t *testing.T, test func(t *testing.T, s *Store)) {
	for _, tc := range []struct {
		name  string
		bytes int
	}{{"cache", 0}, {"no-cache", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := Open(Options{Path: filepath.Join(t.TempDir(), "idvault.db"), MasterKey: newKey(t), RecordCacheBytes: tc.bytes})
			require.NoError(t, err)
			t.Cleanup(func() { s.Close() })
			require.Equal(t, tc.bytes < 0, s.cache.off())
			test(t, s)
		})
	}
}

// A deleted app's records are gone from every read, cache included: an app created again
// under the same ID (an app imported again with its secret) starts without identities, and the
// cached public and private identities of the deleted one are never answered.
func TestDeleteAppDropsCachedRecords(t *testing.T) {
	t.Parallel()
	withAndWithoutCache(t, deleteAppDropsRecords)
}

func deleteAppDropsRecords(t *testing.T, s *Store) {
	a, b := testApp(1), testApp(2)
	require.NoError(t, s.CreateApp(a))
	require.NoError(t, s.CreateApp(b))
	for _, app := range []App{a, b} {
		putIdentity(t, s, app.ID, "x@y.io", "perm", "pub")
		pubs, err := s.Publics(app.ID, []string{"x@y.io"})
		require.NoError(t, err)
		require.Equal(t, "pub", pubs[0].PublicPermanent)
		r, err := s.PrivateRecord(app.ID, "x@y.io")
		require.NoError(t, err)
		require.Equal(t, "perm", r.PermanentIdentity)
	}
	require.NoError(t, s.DeleteApp(a.ID))
	require.NoError(t, s.CreateApp(a))

	pubs, err := s.Publics(a.ID, []string{"x@y.io"})
	require.NoError(t, err)
	require.Equal(t, []Public{{}}, pubs, "the deleted app's public identity is answered")
	_, err = s.PrivateRecord(a.ID, "x@y.io")
	require.ErrorIs(t, err, ErrNotFound, "the deleted app's private identity is answered")

	pubs, err = s.Publics(b.ID, []string{"x@y.io"})
	require.NoError(t, err)
	require.Equal(t, "pub", pubs[0].PublicPermanent, "another app's records are kept")
}

// Every write shows in the reads that follow it, whether the record was cached by a read
// (Publics, PrivateRecord) or by the write before, and without the cache.
func TestWritesShowThroughTheCache(t *testing.T) {
	t.Parallel()
	withAndWithoutCache(t, writesShowInReads)
}

func writesShowInReads(t *testing.T, s *Store) {
	app := testApp(1).ID
	putIdentity(t, s, app, "x@y.io", "perm", "pub")
	_, err := s.Publics(app, []string{"x@y.io"})
	require.NoError(t, err)
	_, err = s.PrivateRecord(app, "x@y.io")
	require.NoError(t, err)

	_, err = s.UpdateRecords(app, []string{"x@y.io"}, func(_ int, r *Record, _ bool) (bool, error) {
		r.ProvisionalIdentity, r.PublicProvisional = "prov", "pub-prov"
		return true, nil
	})
	require.NoError(t, err)
	_, err = s.UpdateRecord(app, "x@y.io", func(r *Record, _ bool) (bool, error) { r.Registered = true; return true, nil })
	require.NoError(t, err)

	pubs, err := s.Publics(app, []string{"x@y.io"})
	require.NoError(t, err)
	require.Equal(t, Public{Found: true, HasPermanent: true, HasProvisional: true, Registered: true,
		PublicPermanent: "pub", PublicProvisional: "pub-prov"}, pubs[0])
	r, err := s.PrivateRecord(app, "x@y.io")
	require.NoError(t, err)
	require.True(t, r.Registered)
	require.Equal(t, "prov", r.ProvisionalIdentity)
	require.Empty(t, r.PublicPermanent, "PrivateRecord leaves the public identities out")
}

// The cache's versions: a read whose transaction is older than a write already applied does
// not put back the state that write replaced, and of two writes of one record in one
// transaction, the later one stays whatever order they are applied in.
func TestCacheKeepsTheNewestState(t *testing.T) {
	t.Parallel()
	app := []byte("app")
	rec := func(registered bool) Record {
		return Record{AppID: app, Email: "x@y.io", UserID: "u", PermanentIdentity: "perm", PublicPermanent: "pub", Registered: registered}
	}
	registered := func(c *recordCache) bool {
		out := make([]Public, 1)
		require.Empty(t, c.publics(app, []string{"x@y.io"}, out))
		p, ok := c.private(app, "x@y.io")
		require.True(t, ok)
		require.Equal(t, out[0].Registered, p.Registered)
		return p.Registered
	}

	c := newRecordCache(0)
	c.written(5, []Record{rec(true)}, []uint64{1})
	c.fillPublics(4, app, []string{"x@y.io"}, []int{0}, []Public{rec(false).Public()})
	c.fillPrivate(4, app, "x@y.io", rec(false))
	require.True(t, registered(c), "a read older than the write replaced its state")

	c = newRecordCache(0)
	c.written(7, []Record{rec(true)}, []uint64{2})
	c.written(7, []Record{rec(false)}, []uint64{1})
	require.True(t, registered(c), "the earlier write of the transaction won")

	c = newRecordCache(0)
	c.written(8, []Record{rec(true)}, []uint64{1})
	c.written(6, []Record{rec(false)}, []uint64{1}) // an older commit applied late
	out := make([]Public, 1)
	require.Len(t, c.publics(app, []string{"x@y.io"}, out), 1, "an older commit applied late must drop the entry")
	c.fillPrivate(7, app, "x@y.io", rec(false)) // reads that began before the write of transaction 8
	c.fillPublics(7, app, []string{"x@y.io"}, []int{0}, []Public{rec(false).Public()})
	_, ok := c.private(app, "x@y.io")
	require.False(t, ok, "a read older than the last write applied filled the cache")
	require.Len(t, c.publics(app, []string{"x@y.io"}, out), 1, "a read older than the last write applied filled the cache")

	c = newRecordCache(0)
	c.fillPrivate(3, app, "x@y.io", rec(false))
	c.forget(app, "x@y.io") // a commit that failed
	_, ok = c.private(app, "x@y.io")
	require.False(t, ok, "a failed write must drop the entry")
}

// The cache stays within its bound, and a store whose cache evicts still answers every record.
func TestRecordCacheIsBounded(t *testing.T) {
	t.Parallel()
	const bound = 8 << 10
	s, err := Open(Options{Path: filepath.Join(t.TempDir(), "idvault.db"), MasterKey: newKey(t), RecordCacheBytes: bound})
	require.NoError(t, err)
	defer s.Close()
	app := testApp(1).ID
	var emails []string
	for i := range 200 {
		e := fmt.Sprintf("u%d@y.io", i)
		emails = append(emails, e)
		putIdentity(t, s, app, e, "perm-"+e, "pub-"+e)
	}
	for range 2 {
		pubs, err := s.Publics(app, emails)
		require.NoError(t, err)
		for i, e := range emails {
			require.Equal(t, "pub-"+e, pubs[i].PublicPermanent)
			r, err := s.PrivateRecord(app, e)
			require.NoError(t, err)
			require.Equal(t, "perm-"+e, r.PermanentIdentity)
		}
	}
	s.cache.mu.RLock()
	defer s.cache.mu.RUnlock()
	require.LessOrEqual(t, s.cache.bytes, bound)
	require.Less(t, s.cache.len(), 200)
	require.NotZero(t, s.cache.len())
}

// A closed store answers no read from memory.
func TestClosedStoreAnswersNothing(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := testApp(1).ID
	putIdentity(t, s, app, "x@y.io", "perm", "pub")
	_, err := s.Publics(app, []string{"x@y.io"})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = s.Publics(app, []string{"x@y.io"})
	require.Error(t, err)
	_, err = s.PrivateRecord(app, "x@y.io")
	require.Error(t, err)
}

// len is the number of cached entries.
func (c *recordCache) len() int {
	n := 0
	for _, m := range c.apps {
		n += len(m)
	}
	return n
}

// A write that declines to store a record that does not exist leaves it absent for the reads
// that follow, as without the cache: no empty record is answered from memory.
func TestDeclinedWriteOfANewRecordCachesNothing(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := testApp(1).ID
	_, err := s.UpdateRecord(app, "new@y.io", func(*Record, bool) (bool, error) { return false, nil })
	require.NoError(t, err)
	_, err = s.UpdateRecords(app, []string{"other@y.io"}, func(int, *Record, bool) (bool, error) { return false, nil })
	require.NoError(t, err)
	for _, e := range []string{"new@y.io", "other@y.io"} {
		_, err = s.PrivateRecord(app, e)
		require.ErrorIs(t, err, ErrNotFound, "a record never stored is answered")
		pubs, err := s.Publics(app, []string{e})
		require.NoError(t, err)
		require.Equal(t, []Public{{}}, pubs, "a record never stored is answered")
	}
}
