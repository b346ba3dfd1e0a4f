package idserver

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The window opens at the first creation after the last one closed; ended windows are dropped
// when the table doubles, so memory follows the users of one window.
func TestNewIdentitiesWindow(t *testing.T) {
	t.Parallel()
	require.Nil(t, newNewIdentities(0, time.Hour), "0: no bound")
	l := newNewIdentities(2, time.Hour)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, d := range []time.Duration{0, 10 * time.Minute} {
		_, _, ok := l.take("u", t0.Add(d))
		require.True(t, ok)
	}
	_, wait, ok := l.take("u", t0.Add(20*time.Minute))
	require.False(t, ok)
	require.Equal(t, 40*time.Minute, wait)
	_, _, ok = l.take("u", t0.Add(time.Hour))
	require.True(t, ok, "a new window opens when the last one ended")

	for i := range 1500 {
		_, _, ok := l.take("user"+strconv.Itoa(i), t0)
		require.True(t, ok)
	}
	// The table doubled past 1024 without a window ending (nothing dropped); when it doubles
	// again, the windows ended by then go.
	for i := range 600 {
		_, _, ok := l.take("later"+strconv.Itoa(i), t0.Add(2*time.Hour))
		require.True(t, ok)
	}
	require.Len(t, l.users, 600, "ended windows dropped: only the open ones stay")
	require.NotContains(t, l.users, "user0")
	_, _, ok = l.take("later599", t0.Add(2*time.Hour))
	require.True(t, ok, "the users of the open window kept their counts")
}

// A creation given back frees its place in the window it was counted in; a window left with
// none is forgotten (the next opens at the next creation), and a refund for a window that
// ended meanwhile does not touch the user's new one.
func TestNewIdentitiesRefund(t *testing.T) {
	t.Parallel()
	l := newNewIdentities(2, time.Hour)
	t0 := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	w, _, ok := l.take("u", t0)
	require.True(t, ok)
	l.refund("u", w)
	require.NotContains(t, l.users, "u", "a window with no creation is forgotten")

	_, _, ok = l.take("u", t0.Add(10*time.Minute))
	require.True(t, ok)
	w, _, ok = l.take("u", t0.Add(20*time.Minute))
	require.True(t, ok)
	_, _, ok = l.take("u", t0.Add(30*time.Minute))
	require.False(t, ok, "full")
	l.refund("u", w)
	_, _, ok = l.take("u", t0.Add(40*time.Minute))
	require.True(t, ok, "the place given back is taken again")
	_, wait, ok := l.take("u", t0.Add(50*time.Minute))
	require.False(t, ok)
	require.Equal(t, 20*time.Minute, wait, "the window still opened at the first creation")

	old, _, ok := l.take("v", t0)
	require.True(t, ok)
	_, _, ok = l.take("v", t0.Add(time.Hour)) // a new window: the old one ended
	require.True(t, ok)
	l.refund("v", old)
	require.Equal(t, 1, l.users["v"].n, "the new window keeps its count")
}
