package store

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// rawRecord is the stored, still sealed value of (app, email).
func rawRecord(t *testing.T, s *Store, app []byte, email string) recordDisk {
	t.Helper()
	var d recordDisk
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		var err error
		d, err = decodeRecord(bytes.Clone(tx.Bucket(bucketRecords).Get(recordKey(app, email))))
		return err
	}))
	return d
}

// An identity sealed in a draft is stored as sealed there (not sealed again in the commit), and
// reads give it back.
func TestDraftIsStoredAsSealed(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := testApp(1).ID
	perm, pub := strings.Repeat("p", 600), "pub-perm"
	d, err := s.SealDraft(app, "a@x.io", Record{PermanentIdentity: perm, PublicPermanent: pub})
	require.NoError(t, err)
	_, err = s.UpdateRecordDraft(app, "a@x.io", d, func(r *Record, _ bool) (bool, error) {
		r.UserID, r.PermanentIdentity, r.PublicPermanent = "uid", perm, pub
		return true, nil
	})
	require.NoError(t, err)
	raw := rawRecord(t, s, app, "a@x.io")
	require.Equal(t, d.sealed[0], raw.permanent, "the permanent identity as the draft sealed it")
	require.Equal(t, d.sealed[2], raw.publicPermanent, "the public identity as the draft sealed it")
	require.NotContains(t, string(raw.permanent), "pppp")
	got, err := s.Record(app, "a@x.io")
	require.NoError(t, err)
	require.Equal(t, perm, got.PermanentIdentity)
	require.Equal(t, pub, got.PublicPermanent)
	require.Equal(t, "uid", got.UserID)
}

// A draft is used only for its own record and its own values: an identity that differs from
// the draft's, or a draft made for another email, is sealed in the commit, bound to its record,
// and reads back as written.
func TestDraftOfAnotherValueOrRecordIsNotUsed(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := testApp(1).ID
	d, err := s.SealDraft(app, "a@x.io", Record{PermanentIdentity: "perm-a", PublicPermanent: "pub-a"})
	require.NoError(t, err)

	// Another email: the draft's sealed values are bound to a@x.io and must not be copied.
	_, err = s.UpdateRecordDraft(app, "b@x.io", d, func(r *Record, _ bool) (bool, error) {
		r.PermanentIdentity, r.PublicPermanent = "perm-a", "pub-a"
		return true, nil
	})
	require.NoError(t, err)
	raw := rawRecord(t, s, app, "b@x.io")
	require.NotEqual(t, d.sealed[0], raw.permanent)
	got, err := s.Record(app, "b@x.io")
	require.NoError(t, err, "sealed for b@x.io, it opens as b@x.io's")
	require.Equal(t, "perm-a", got.PermanentIdentity)

	// Its own email, but another value for the public identity (a function that changed its mind).
	_, err = s.UpdateRecordDraft(app, "a@x.io", d, func(r *Record, _ bool) (bool, error) {
		r.PermanentIdentity, r.PublicPermanent = "perm-a", "pub-other"
		return true, nil
	})
	require.NoError(t, err)
	raw = rawRecord(t, s, app, "a@x.io")
	require.Equal(t, d.sealed[0], raw.permanent, "the unchanged identity comes from the draft")
	require.NotEqual(t, d.sealed[2], raw.publicPermanent)
	got, err = s.Record(app, "a@x.io")
	require.NoError(t, err)
	require.Equal(t, "pub-other", got.PublicPermanent)
}

// UpdateRecordsDrafts uses each email's own draft, and a missing draft (nil) seals in the commit.
func TestDraftsOfABatch(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	app := testApp(1).ID
	emails := []string{"a@x.io", "b@x.io", "c@x.io"}
	drafts := make([]*Draft, len(emails))
	for i, e := range emails[:2] {
		var err error
		drafts[i], err = s.SealDraft(app, e, Record{ProvisionalIdentity: "prov-" + e, PublicProvisional: "pub-" + e})
		require.NoError(t, err)
	}
	_, err := s.UpdateRecordsDrafts(app, emails, drafts, func(i int, r *Record, _ bool) (bool, error) {
		r.ProvisionalIdentity, r.PublicProvisional = "prov-"+emails[i], "pub-"+emails[i]
		return true, nil
	})
	require.NoError(t, err)
	for i, e := range emails {
		raw := rawRecord(t, s, app, e)
		if drafts[i] != nil {
			require.Equal(t, drafts[i].sealed[1], raw.provisional, e)
			require.Equal(t, drafts[i].sealed[3], raw.publicProvisional, e)
		}
		pubs, err := s.Publics(app, []string{e})
		require.NoError(t, err)
		require.Equal(t, "pub-"+e, pubs[0].PublicProvisional)
		r, err := s.Record(app, e)
		require.NoError(t, err)
		require.Equal(t, "prov-"+e, r.ProvisionalIdentity)
	}
}
