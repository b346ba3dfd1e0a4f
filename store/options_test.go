package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// The devices behind Options change how writes are grouped and how bbolt keeps its free pages,
// never what is stored: with each switched off, concurrent writers each get their record stored,
// a deleted app's records are gone, later writes go into a file with freed pages, it passes
// bbolt's check, and every record
// reads back after the store is opened again, with the same options or with the defaults.
func TestWritesWithAndWithoutEachDevice(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"all-on", Options{}},
		{"no-linger", Options{NoLinger: true}},
		{"sync-freelist", Options{SyncFreelist: true}},
		{"array-freelist", Options{ArrayFreelist: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			opts := tc.opts
			opts.Path, opts.MasterKey = filepath.Join(t.TempDir(), "idvault.db"), newKey(t)
			s, err := Open(opts)
			require.NoError(t, err)
			require.Equal(t, opts.NoLinger, s.group.noLinger)
			require.Equal(t, opts.SyncFreelist, !s.db.NoFreelistSync)
			require.Equal(t, opts.ArrayFreelist, s.db.FreelistType == bolt.FreelistArrayType)
			kept, gone := testApp(4), testApp(5)
			require.NoError(t, s.CreateApp(kept))
			require.NoError(t, s.CreateApp(gone))
			const writers, each = 16, 8
			for _, app := range []App{gone, kept} {
				writeConcurrently(t, s, app.ID, writers, each)
			}
			require.NoError(t, s.DeleteApp(gone.ID))
			writeConcurrently(t, s, testApp(6).ID, writers, 1) // after the delete freed pages
			st := s.RecordCommits()
			require.Equal(t, int64(2*writers*each+writers), st.Writes)
			require.NoError(t, s.Close())
			require.NoError(t, VerifyFile(opts.Path))

			for _, again := range []Options{opts, {Path: opts.Path, MasterKey: opts.MasterKey}} {
				s, err = Open(again)
				require.NoError(t, err)
				for w := range writers {
					for i := range each {
						email := fmt.Sprintf("w%d-%d@example.com", w, i)
						r, err := s.PrivateRecord(kept.ID, email)
						require.NoError(t, err)
						require.Equal(t, "perm-"+email, r.PermanentIdentity)
						_, err = s.PrivateRecord(gone.ID, email)
						require.ErrorIs(t, err, ErrNotFound)
					}
				}
				require.NoError(t, s.Close())
			}
		})
	}
}

// writeConcurrently stores, under app, each records from each of writers goroutines at once.
func writeConcurrently(t *testing.T, s *Store, app []byte, writers, each int) {
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				email := fmt.Sprintf("w%d-%d@example.com", w, i)
				_, err := s.UpdateRecord(app, email, func(r *Record, _ bool) (bool, error) {
					r.UserID, r.PermanentIdentity, r.PublicPermanent = email, "perm-"+email, "pub-"+email
					return true, nil
				})
				require.NoError(t, err)
			}
		})
	}
	wg.Wait()
}
