package store

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// A request that found its app before the app was deleted writes after the deletion: the
// write must be refused, not recreate records, codes or counters under the deleted app's ID.
func TestWritesForADeletedAppAreRefused(t *testing.T) {
	t.Parallel()
	s, _, _, _ := openClocked(t)
	a, b := testApp(7), testApp(8)
	require.NoError(t, s.CreateApp(a))
	require.NoError(t, s.CreateApp(b))
	const email = "e@example.com"
	lim := SendLimits{Address: Window{Max: 5, Per: time.Hour}, App: Window{Max: 5, Per: time.Hour},
		IP: Rate{PerSecond: 1, Burst: 5}, ClientIP: netip.MustParseAddr("127.0.0.1")}
	in := issue(a.ID, email, "12345678", true)
	in.Limits = &lim
	code, err := s.IssueCode(in) // issued before the deletion, withdrawn after
	require.NoError(t, err)
	_, err = s.UpdateRecord(a.ID, email, func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil })
	require.NoError(t, err)

	require.NoError(t, s.DeleteApp(a.ID))

	create := func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil }
	_, err = s.UpdateRecord(a.ID, email, create)
	require.ErrorIs(t, err, ErrAppDeleted, "UpdateRecord")
	_, err = s.UpdateRecords(a.ID, []string{"f@example.com", email}, func(_ int, r *Record, e bool) (bool, error) { return create(r, e) })
	require.ErrorIs(t, err, ErrAppDeleted, "UpdateRecords")
	_, err = s.IssueCode(in)
	require.ErrorIs(t, err, ErrAppDeleted, "IssueCode")
	_, _, err = s.TestCode(issue(a.ID, email, "87654321", true))
	require.ErrorIs(t, err, ErrAppDeleted, "TestCode")
	require.ErrorIs(t, s.UseCode(a.ID, email, macOf("00000000"), testAttempts), ErrAppDeleted, "UseCode")
	require.ErrorIs(t, s.WithdrawSend(a.ID, email, code.ID, lim), ErrAppDeleted, "WithdrawSend")
	_, err = s.Record(a.ID, email)
	require.ErrorIs(t, err, ErrNotFound, "no record of the deleted app is served from the cache")

	// The other app is untouched, and a write of it shares nothing with the refusals.
	_, err = s.UpdateRecord(b.ID, email, create)
	require.NoError(t, err)
	requireNoKeysOf(t, s, a.ID)

	// An app created again with that ID is written as any other.
	require.NoError(t, s.CreateApp(a))
	_, err = s.UpdateRecord(a.ID, email, create)
	require.NoError(t, err)
	n, err := s.CountRecords(a.ID)
	require.NoError(t, err)
	require.Equal(t, 1, n)
}

// A deletion that finds no app leaves writes for that ID alone (declared apps are not stored).
func TestDeletingAnUnknownAppRefusesNothing(t *testing.T) {
	t.Parallel()
	s, _ := openTemp(t, newKey(t))
	id := testApp(9).ID
	require.ErrorIs(t, s.DeleteApp(id), ErrNotFound)
	_, err := s.UpdateRecord(id, "g@example.com", func(r *Record, _ bool) (bool, error) { r.UserID = "u"; return true, nil })
	require.NoError(t, err)
}

// requireNoKeysOf fails if any bucket holds a key of the app appID.
func requireNoKeysOf(t *testing.T, s *Store, appID []byte) {
	t.Helper()
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		require.Nil(t, tx.Bucket(bucketApps).Get(appID))
		for _, name := range [][]byte{bucketRecords, bucketCodes, bucketThrottle} {
			c := tx.Bucket(name).Cursor()
			k, _ := c.Seek(appID)
			require.False(t, k != nil && bytes.HasPrefix(k, appID), "bucket %s holds a key of the deleted app", name)
		}
		return nil
	}))
}
