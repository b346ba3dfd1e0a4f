package store

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Changed options survive a reopen, touch updated_at only, and leave the secret and token alone.
func TestSetAppOptionsPersists(t *testing.T) {
	t.Parallel()
	mk := newKey(t)
	path := filepath.Join(t.TempDir(), "idvault.db")
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	a := testApp(3)
	require.NoError(t, s.CreateApp(a))
	before, err := s.App(a.ID)
	require.NoError(t, err)
	s.SetClock(func() time.Time { return before.UpdatedAt.Add(time.Hour) })
	got, err := s.SetAppOptions(a.ID, AppOptions{RegisteredUsersOnly: true})
	require.NoError(t, err)
	require.True(t, got.Options.RegisteredUsersOnly)
	require.Equal(t, before.CreatedAt, got.CreatedAt)
	require.True(t, got.UpdatedAt.After(before.UpdatedAt))
	_, err = s.SetAppOptions(bytes.Repeat([]byte{9}, 32), AppOptions{})
	require.ErrorIs(t, err, ErrNotFound)
	require.NoError(t, s.Close())

	s, err = Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s.Close()
	got, err = s.App(a.ID)
	require.NoError(t, err)
	require.True(t, got.Options.RegisteredUsersOnly)
	require.False(t, got.Options.LegacyErrors)
	require.Equal(t, a.Secret, got.Secret)
	require.Equal(t, a.AuthTokenHash, got.AuthTokenHash)
}
