package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// usedBytes is the size of the pages in use (bbolt's high-water mark).
func usedBytes(t *testing.T, s *Store) int64 {
	t.Helper()
	var used int64
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error { used = tx.Size(); return nil }))
	return used
}

// holeAt is the offset of the first hole of the file at or after off (its size when it has
// none there).
func holeAt(t *testing.T, path string, off int64) int64 {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	hole, err := unix.Seek(int(f.Fd()), off, unix.SEEK_HOLE)
	require.NoError(t, err)
	return hole
}

// As the data grows, each commit finds the file holding written blocks (no hole) from the end of
// the pages in use to at least half the room kept ahead, so commits write new pages into blocks
// the file system already holds; and every record written, from concurrent writers, reads back after a restart
// on a file that passes the store's checks.
func TestDataFileIsWrittenAheadOfItsData(t *testing.T) {
	mk := newKey(t)
	s, path := openTemp(t, mk)
	appID := []byte("app-ahead")
	const writers, each = 8, 300 // about 2 MiB of records
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				email := fmt.Sprintf("w%d-%d@example.com", w, i)
				_, err := s.UpdateRecord(appID, email, func(r *Record, _ bool) (bool, error) {
					r.UserID, r.PermanentIdentity = "uid-"+email, string(make([]byte, 1500))
					return true, nil
				})
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	// keep tops the room up before a commit allocates its pages, so the last commit may have
	// taken the room below half (about 1 commit in 100, writing one at a time): a commit that
	// allocates nothing tops it up, as the next write would, and leaves the data where it is.
	require.NoError(t, s.group.update(func(*bolt.Tx) error { return nil }))

	used := usedBytes(t, s)
	require.Greater(t, used, int64(2<<20), "the records should take more than 2 MiB")
	st, err := os.Stat(path)
	require.NoError(t, err)
	want := used + aheadFor(used)/2
	require.GreaterOrEqual(t, st.Size(), want, "the file should reach past the data by half the room kept")
	require.GreaterOrEqual(t, holeAt(t, path, used), want,
		"the room past the data should be written blocks, not a hole (file size %d, data %d)", st.Size(), used)

	require.NoError(t, s.Close())
	require.NoError(t, VerifyFile(path))
	s2, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s2.Close()
	st, err = os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, st.Size(), s2.group.ahead.upTo, "a restart should know the room written before, not write it again")
	n, err := s2.CountRecords(appID)
	require.NoError(t, err)
	require.Equal(t, writers*each, n)
	for w := range writers {
		email := fmt.Sprintf("w%d-%d@example.com", w, each-1)
		r, err := s2.PrivateRecord(appID, email)
		require.NoError(t, err)
		require.Equal(t, "uid-"+email, r.UserID)
	}
}

// On a nearly full disk, the room that cannot be written is given back (the file keeps its size),
// commits go on as before, and no extension is tried again for a while.
func TestRoomAheadIsGivenBackOnAFullDisk(t *testing.T) {
	dir := mountTmpfs(t, "2m")
	mk := newKey(t)
	path := filepath.Join(dir, "idvault.db")
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s.Close()
	appID := []byte("app-full")
	put := func(i int) error {
		_, err := s.UpdateRecord(appID, fmt.Sprintf("u%d@example.com", i), func(r *Record, _ bool) (bool, error) {
			r.UserID, r.PermanentIdentity = "uid", string(make([]byte, 1500))
			return true, nil
		})
		return err
	}
	require.NoError(t, put(0))
	ahead := s.group.ahead
	require.Greater(t, ahead.upTo, usedBytes(t, s), "the first commit should have written room ahead")

	// Fill the disk, then free 64 KiB: enough for bbolt's pages, not for the next room (256 KiB).
	fill := fillDisk(t, dir)
	fst, err := os.Stat(fill)
	require.NoError(t, err)
	require.NoError(t, os.Truncate(fill, fst.Size()-64<<10))

	before := ahead.upTo
	i := 1
	for ; ahead.failedAt.IsZero(); i++ {
		require.NoError(t, put(i), "a commit must not fail because the room ahead could not be written")
		require.Less(t, i, 10000, "no extension was tried")
	}
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, before, st.Size(), "the failed extension should have been given back")
	failedAt := ahead.failedAt
	require.NoError(t, put(i), "the commit after a failed extension")
	require.Equal(t, failedAt, ahead.failedAt, "no extension should be tried again within aheadRetry")

	require.NoError(t, os.Remove(fill))
	ahead.failedAt = ahead.failedAt.Add(-aheadRetry) // as if aheadRetry had passed
	for j := 0; ahead.upTo == before; j++ {
		require.NoError(t, put(i+1+j))
		require.Less(t, j, 10000, "no extension after space was freed")
	}
	require.True(t, ahead.failedAt.IsZero())
}
