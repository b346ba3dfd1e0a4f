package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// The group commit's lingering (Options.NoLinger) changes only how writes are grouped: with it
// on or off, concurrent writers each get their record stored, and every record reads back after
// the store is opened again.
func TestConcurrentWritesWithAndWithoutLinger(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		noLinger bool
	}{{"linger", false}, {"no-linger", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mk := newKey(t)
			opts := Options{Path: filepath.Join(t.TempDir(), "idvault.db"), MasterKey: mk, NoLinger: tc.noLinger}
			s, err := Open(opts)
			require.NoError(t, err)
			require.Equal(t, tc.noLinger, s.group.noLinger)
			app := testApp(4).ID
			const writers, each = 16, 8
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
			st := s.RecordCommits()
			require.Equal(t, int64(writers*each), st.Writes)
			require.NoError(t, s.Close())

			s, err = Open(opts)
			require.NoError(t, err)
			defer s.Close()
			for w := range writers {
				for i := range each {
					email := fmt.Sprintf("w%d-%d@example.com", w, i)
					r, err := s.PrivateRecord(app, email)
					require.NoError(t, err)
					require.Equal(t, "perm-"+email, r.PermanentIdentity)
				}
			}
		})
	}
}
