package store

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

func putIdentity(t *testing.T, s *Store, appID []byte, email, perm, pub string) Record {
	t.Helper()
	r, err := s.UpdateRecord(appID, email, func(r *Record, _ bool) (bool, error) {
		r.UserID, r.PermanentIdentity, r.PublicPermanent = "uid-"+email, perm, pub
		return true, nil
	})
	require.NoError(t, err)
	return r
}

func TestRecordRoundTripsEveryField(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	s, path := openTemp(t, mk)
	app := testApp(1).ID
	want, err := s.UpdateRecord(app, "a@x.io", func(r *Record, exists bool) (bool, error) {
		require.False(t, exists)
		r.UserID, r.PermanentIdentity, r.ProvisionalIdentity = "uid", "perm", "prov"
		r.PublicPermanent, r.PublicProvisional, r.Registered = "pub-perm", "pub-prov", true
		return true, nil
	})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	s2, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s2.Close()
	got, err := s2.Record(app, "a@x.io")
	require.NoError(t, err)
	require.Equal(t, want, got)

	pubs, err := s2.Publics(app, []string{"nobody@x.io", "a@x.io"})
	require.NoError(t, err)
	require.Equal(t, []Public{{}, {
		Found: true, HasPermanent: true, HasProvisional: true, Registered: true,
		PublicPermanent: "pub-perm", PublicProvisional: "pub-prov",
	}}, pubs)
}

// A data file of schema 1 (JSON records without public identities) opens: its records read as
// before, Publics says which public identities are missing, the next write rewrites the record
// in the new layout, and the schema is raised so that an older idvault refuses the file.
func TestSchema1RecordsAreReadAndUpgraded(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	s, path := openTemp(t, mk)
	app := testApp(2).ID
	key := recordKey(app, "old@x.io")
	created := time.Date(2025, 1, 2, 3, 4, 5, 6, time.UTC)
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error {
		perm, err := s.seal.sealString("old-perm", adFor(bucketRecords, key, "permanent"))
		if err != nil {
			return err
		}
		v, err := json.Marshal(recordJSON{UserID: "old-uid", Permanent: perm, Registered: true, CreatedAt: created, UpdatedAt: created})
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketRecords).Put(key, v); err != nil {
			return err
		}
		return tx.Bucket(bucketMeta).Put([]byte("schema"), binary.BigEndian.AppendUint64(nil, 1))
	}))
	require.NoError(t, s.Close())

	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		require.Equal(t, uint64(SchemaVersion), binary.BigEndian.Uint64(tx.Bucket(bucketMeta).Get([]byte("schema"))))
		return nil
	}))
	r, err := s.Record(app, "old@x.io")
	require.NoError(t, err)
	require.Equal(t, Record{AppID: app, Email: "old@x.io", UserID: "old-uid", PermanentIdentity: "old-perm",
		Registered: true, CreatedAt: created, UpdatedAt: created}, r)
	pubs, err := s.Publics(app, []string{"old@x.io"})
	require.NoError(t, err)
	require.Equal(t, Public{Found: true, HasPermanent: true, Registered: true}, pubs[0], "no stored public identity")

	_, err = s.UpdateRecord(app, "old@x.io", func(r *Record, _ bool) (bool, error) {
		r.PublicPermanent = "old-pub"
		return true, nil
	})
	require.NoError(t, err)
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		require.Equal(t, byte(recordFormat), tx.Bucket(bucketRecords).Get(key)[0], "rewritten in the new layout")
		return nil
	}))
	r, err = s.Record(app, "old@x.io")
	require.NoError(t, err)
	require.Equal(t, "old-perm", r.PermanentIdentity)
	require.Equal(t, "old-pub", r.PublicPermanent)
	require.Equal(t, created, r.CreatedAt, "creation time kept")
}

func TestDecodeRecordRejectsDamage(t *testing.T) {
	t.Parallel()
	good := recordDisk{userID: []byte("u"), permanent: []byte("p"), createdAt: time.Unix(1, 0), updatedAt: time.Unix(2, 0)}.encode()
	_, err := decodeRecord(good)
	require.NoError(t, err)
	for name, v := range map[string][]byte{
		"empty":          nil,
		"truncated":      good[:len(good)-1],
		"trailing bytes": append(append([]byte(nil), good...), 0),
		"unknown layout": append([]byte{9}, good[1:]...),
		"bad flags":      append([]byte{recordFormat, 7}, good[2:]...),
		"bad json":       []byte("{nope"),
	} {
		_, err := decodeRecord(v)
		require.Error(t, err, name)
	}
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add(recordDisk{userID: []byte("u"), permanent: []byte("perm"), publicProvisional: []byte("x"), registered: true,
		createdAt: time.Unix(1, 2), updatedAt: time.Unix(3, 4)}.encode())
	f.Add([]byte(`{"user_id":"u","registered":true,"created_at":"2025-01-01T00:00:00Z"}`))
	f.Add([]byte{recordFormat, 0})
	f.Fuzz(func(t *testing.T, v []byte) {
		d, err := decodeRecord(v)
		if err != nil || (len(v) > 0 && v[0] == '{') {
			return
		}
		// What decodes in the binary layout encodes back to the same bytes.
		require.Equal(t, v, d.encode())
	})
}

// Concurrent writers share commits, and every acknowledged write is in the file after a reopen.
func TestConcurrentWritesShareCommits(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	s, path := openTemp(t, mk)
	app := testApp(3).ID
	const writers, each = 32, 20
	before := s.RecordCommits()
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				email := fmt.Sprintf("w%d-%d@x.io", g, i)
				_, err := s.UpdateRecord(app, email, func(r *Record, _ bool) (bool, error) {
					r.PermanentIdentity, r.PublicPermanent = "perm-"+email, "pub-"+email
					return true, nil
				})
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
	d := s.RecordCommits().Sub(before)
	require.Equal(t, int64(writers*each), d.Writes)
	require.Less(t, d.Commits, d.Writes, "some writes shared a commit")
	require.Positive(t, d.Busy)
	// Each commit wrote at least a leaf page, and its writing and syncing is part of its time.
	require.GreaterOrEqual(t, d.Pages, d.Commits)
	require.Positive(t, d.Disk)
	require.LessOrEqual(t, d.Disk, d.Busy)
	require.NoError(t, s.Close())

	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s.Close()
	for g := range writers {
		for i := range each {
			email := fmt.Sprintf("w%d-%d@x.io", g, i)
			r, err := s.Record(app, email)
			require.NoError(t, err, email)
			require.Equal(t, "perm-"+email, r.PermanentIdentity)
		}
	}
}

// In a shared commit, a write whose function fails fails alone; a list write that fails half
// way leaves nothing of itself, and the writes grouped with it still commit.
func TestGroupedWriteFailuresStayAlone(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := testApp(4).ID
	refuse := errors.New("refused")
	start := make(chan struct{})
	var wg sync.WaitGroup
	errs := make([]error, 30)
	for i := range errs {
		wg.Go(func() {
			<-start
			email := fmt.Sprintf("g%d@x.io", i)
			switch i % 3 {
			case 0: // succeeds
				_, errs[i] = s.UpdateRecord(app, email, func(r *Record, _ bool) (bool, error) {
					r.PermanentIdentity = "perm"
					return true, nil
				})
			case 1: // refuses before writing
				_, errs[i] = s.UpdateRecord(app, email, func(*Record, bool) (bool, error) { return false, refuse })
			case 2: // writes its first email, then refuses the second: the whole list must go
				_, errs[i] = s.UpdateRecords(app, []string{email, "second-" + email}, func(j int, r *Record, _ bool) (bool, error) {
					if j == 1 {
						return false, refuse
					}
					r.PermanentIdentity = "perm"
					return true, nil
				})
			}
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		email := fmt.Sprintf("g%d@x.io", i)
		_, rerr := s.Record(app, email)
		if i%3 == 0 {
			require.NoError(t, err, email)
			require.NoError(t, rerr, "%s was acknowledged", email)
		} else {
			require.ErrorIs(t, err, refuse, email)
			require.ErrorIs(t, rerr, ErrNotFound, "%s: nothing of a refused write is stored", email)
		}
	}
}

// A write that panics fails with an error; the writes grouped with it and after it go on.
func TestAPanickingWriteFailsAlone(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := testApp(5).ID
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() {
			_, errs[i] = s.UpdateRecord(app, fmt.Sprintf("p%d@x.io", i), func(r *Record, _ bool) (bool, error) {
				if i == 7 {
					panic("boom")
				}
				r.PermanentIdentity = "perm"
				return true, nil
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if i == 7 {
			require.ErrorContains(t, err, "panic: boom")
			continue
		}
		require.NoError(t, err, i)
	}
	_, err := s.UpdateRecord(app, "after@x.io", func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil })
	require.NoError(t, err, "writes go on after a panic")
}

// A leader waits for the writers of the last group only under load, and never more than half a
// commit or maxLinger; a lone writer never waits.
func TestLingerOnlyUnderLoad(t *testing.T) {
	t.Parallel()
	now := time.Now()
	g := newGroupCommit(nil)
	g.lastGroup, g.lastTime, g.lastEnd = 1, time.Millisecond, now
	_, budget := g.lingerBudget(false, now)
	require.Zero(t, budget, "a lone writer after a lone write does not wait")

	g.lastGroup, g.lastTime, g.lastEnd = 16, 3*time.Millisecond, now.Add(-10*time.Millisecond)
	_, budget = g.lingerBudget(false, now)
	require.Zero(t, budget, "a writer arriving long after the last commit does not wait")

	g.lastEnd = now
	want, budget := g.lingerBudget(false, now)
	require.Equal(t, 16, want, "right after a group of 16, wait for them to come back")
	require.Equal(t, 1500*time.Microsecond, budget, "at most half a commit")

	g.queue = make([]*groupWrite, 10)
	want, budget = g.lingerBudget(true, now)
	require.Equal(t, 26, want, "promoted: the last group beyond those already queued")
	require.Equal(t, 1500*time.Microsecond, budget)

	g.lastTime = time.Second
	_, budget = g.lingerBudget(true, now)
	require.Equal(t, maxLinger, budget, "never more than maxLinger")

	g.noLinger = true
	_, budget = g.lingerBudget(true, now)
	require.Zero(t, budget)
}

// A record's identities are sealed in place in its value: the value is the layout encode
// writes, each identity sealed with its own nonce and bound to its field, and reads give back
// what was written.
func TestPutRecordSealsInPlace(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := bytes.Repeat([]byte{3}, 32)
	want := Record{UserID: "uid", PermanentIdentity: strings.Repeat("p", 600), ProvisionalIdentity: "prov",
		PublicPermanent: "pub-perm", Registered: true}
	_, err := s.UpdateRecord(app, "a@x.io", func(r *Record, _ bool) (bool, error) {
		r.UserID, r.PermanentIdentity, r.ProvisionalIdentity, r.PublicPermanent, r.Registered =
			want.UserID, want.PermanentIdentity, want.ProvisionalIdentity, want.PublicPermanent, want.Registered
		return true, nil
	})
	require.NoError(t, err)
	key := recordKey(app, "a@x.io")
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketRecords).Get(key)
		d, err := decodeRecord(v)
		require.NoError(t, err)
		require.Equal(t, v, d.encode(), "the record layout")
		require.Equal(t, "uid", string(d.userID))
		// Not identities of Tanker's shape: packed as they are, after one byte.
		require.Len(t, d.permanent, sealedSize(1+600))
		require.Len(t, d.provisional, sealedSize(1+4))
		require.Len(t, d.publicPermanent, sealedSize(1+8))
		require.Empty(t, d.publicProvisional)
		require.NotContains(t, string(v), "prov")
		require.NotContains(t, string(v), "pppp")
		require.NotEqual(t, d.permanent[1:25], d.provisional[1:25], "a nonce per field")
		// Each field is bound to its name: opened as another field, it fails.
		_, err = s.seal.open(d.provisional, adFor(bucketRecords, key, "permanent"))
		require.ErrorIs(t, err, ErrSealed)
		return nil
	}))
	got, err := s.Record(app, "a@x.io")
	require.NoError(t, err)
	require.Equal(t, want.PermanentIdentity, got.PermanentIdentity)
	require.Equal(t, want.ProvisionalIdentity, got.ProvisionalIdentity)
	require.Equal(t, want.PublicPermanent, got.PublicPermanent)
	require.Empty(t, got.PublicProvisional)
	require.True(t, got.Registered)
}
