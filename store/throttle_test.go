package store

import (
	"bytes"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSendLimits(t *testing.T) {
	t.Parallel()
	app := bytes.Repeat([]byte{7}, 32)
	ip1, ip2 := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")

	send := func(s *Store, email string, lim SendLimits) error {
		in := issue(app, email, "12345678", false)
		in.Limits = &lim
		_, err := s.IssueCode(in)
		return err
	}
	tests := []struct {
		name   string
		lim    SendLimits
		emails []string // one send each, all admitted
		next   string   // the refused send
		reason string
		wait   time.Duration
	}{
		{"per address", SendLimits{Address: Window{Max: 2, Per: time.Hour}},
			[]string{"a@x.io", "a@x.io", "b@x.io"}, "a@x.io", ReasonAddress, time.Hour},
		{"per app", SendLimits{App: Window{Max: 3, Per: 10 * time.Minute}},
			[]string{"a@x.io", "b@x.io", "c@x.io"}, "d@x.io", ReasonApp, 10 * time.Minute},
		{"per IP", SendLimits{IP: Rate{PerSecond: 0.5, Burst: 2}, ClientIP: ip1},
			[]string{"a@x.io", "b@x.io"}, "c@x.io", ReasonIP, 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, _, _ := openClocked(t)
			for _, e := range tc.emails {
				require.NoError(t, send(s, e, tc.lim))
			}
			err := send(s, tc.next, tc.lim)
			var te *ThrottleError
			require.ErrorAs(t, err, &te)
			require.ErrorIs(t, err, ErrThrottled)
			require.Equal(t, tc.reason, te.Reason)
			require.Equal(t, tc.wait, te.RetryAfter)
		})
	}

	t.Run("IP buckets are per IP and refill", func(t *testing.T) {
		t.Parallel()
		s, clk, _, _ := openClocked(t)
		lim := SendLimits{IP: Rate{PerSecond: 1, Burst: 1}, ClientIP: ip1}
		require.NoError(t, send(s, "a@x.io", lim))
		require.ErrorIs(t, send(s, "a@x.io", lim), ErrThrottled)
		lim.ClientIP = ip2
		require.NoError(t, send(s, "a@x.io", lim))
		clk.Add(time.Second)
		lim.ClientIP = ip1
		require.NoError(t, send(s, "a@x.io", lim))
	})

	t.Run("a refused send consumes nothing", func(t *testing.T) {
		t.Parallel()
		s, _, _, _ := openClocked(t)
		lim := SendLimits{Address: Window{Max: 1, Per: time.Hour}, App: Window{Max: 2, Per: time.Hour}}
		require.NoError(t, send(s, "a@x.io", lim))
		for range 5 {
			require.ErrorIs(t, send(s, "a@x.io", lim), ErrThrottled)
		}
		require.NoError(t, send(s, "b@x.io", lim), "the refused sends did not use the app budget")
	})

	t.Run("windows reopen and survive a reopen", func(t *testing.T) {
		t.Parallel()
		s, clk, path, mk := openClocked(t)
		lim := SendLimits{Address: Window{Max: 1, Per: time.Hour}}
		require.NoError(t, send(s, "a@x.io", lim))
		require.NoError(t, s.Close())
		s2, err := Open(Options{Path: path, MasterKey: mk})
		require.NoError(t, err)
		defer s2.Close()
		s2.SetClock(clk.Now)
		var te *ThrottleError
		require.ErrorAs(t, send(s2, "a@x.io", lim), &te)
		require.Equal(t, time.Hour, te.RetryAfter)
		clk.Add(59 * time.Minute)
		require.ErrorAs(t, send(s2, "a@x.io", lim), &te)
		require.Equal(t, time.Minute, te.RetryAfter)
		clk.Add(time.Minute)
		require.NoError(t, send(s2, "a@x.io", lim))
	})
}

func TestLockAndSweepThrottle(t *testing.T) {
	t.Parallel()
	s, clk, _, _ := openClocked(t)
	app := bytes.Repeat([]byte{8}, 32)
	for range 3 {
		require.ErrorIs(t, s.UseCode(app, "l@x.io", macOf("1"), testAttempts), ErrNotFound, "no code: not counted")
	}
	in := issue(app, "l@x.io", "12345678", false)
	in.Limits = &SendLimits{Address: Window{Max: 9, Per: time.Minute}, IP: Rate{PerSecond: 1, Burst: 5}, ClientIP: netip.MustParseAddr("192.0.2.9")}
	_, err := s.IssueCode(in)
	require.NoError(t, err)
	for range 3 {
		require.ErrorIs(t, s.UseCode(app, "l@x.io", macOf("1"), testAttempts), ErrCodeMismatch)
	}
	n, err := s.SweepThrottle(1)
	require.NoError(t, err)
	require.Zero(t, n, "everything still matters")

	clk.Add(time.Minute)
	var te *ThrottleError
	require.ErrorAs(t, s.UseCode(app, "l@x.io", macOf("12345678"), testAttempts), &te)
	require.Equal(t, 14*time.Minute, te.RetryAfter)
	n, err = s.SweepThrottle(1)
	require.NoError(t, err)
	require.Equal(t, 2, n, "the closed address window and the refilled IP bucket")

	clk.Add(14 * time.Minute)
	n, err = s.SweepThrottle(1)
	require.NoError(t, err)
	require.Equal(t, 1, n, "the ended lock")
	require.NoError(t, s.UseCode(app, "l@x.io", macOf("12345678"), testAttempts))
}
