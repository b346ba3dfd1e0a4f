package store

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"

	"github.com/idvault/idvault/app/apptest/fakeclock"
)

func macOf(code string) []byte {
	h := sha256.Sum256([]byte("test mac " + code))
	return h[:]
}

var testAttempts = AttemptLimits{MaxWrong: 3, Lock: 15 * time.Minute}

func issue(appID []byte, email, code string, test bool) Issue {
	in := Issue{AppID: appID, Email: email, MAC: macOf(code), TTL: 30 * time.Minute, Retain: 30 * time.Minute, Keep: 3, Attempts: testAttempts}
	if test {
		in.Plain = code
	}
	return in
}

func openClocked(t *testing.T) (*Store, *fakeclock.Clock, string, *MasterKey) {
	t.Helper()
	mk := newKey(t)
	s, path := openTemp(t, mk)
	clk := fakeclock.New()
	s.SetClock(clk.Now)
	return s, clk, path, mk
}

func TestCodeLifecycle(t *testing.T) {
	t.Parallel()
	app := bytes.Repeat([]byte{1}, 32)
	const email = "a@example.com"

	tests := []struct {
		name string
		run  func(t *testing.T, s *Store, clk *fakeclock.Clock)
	}{
		{"single use", func(t *testing.T, s *Store, _ *fakeclock.Clock) {
			_, err := s.IssueCode(issue(app, email, "11111111", false))
			require.NoError(t, err)
			require.NoError(t, s.UseCode(app, email, macOf("11111111"), testAttempts))
			require.ErrorIs(t, s.UseCode(app, email, macOf("11111111"), testAttempts), ErrCodeUsed)
			require.ErrorIs(t, s.UseCode(app, email, macOf("12345678"), testAttempts), ErrNotFound, "no code pending")
		}},
		{"a used code sent again is not a wrong code, and is swept with its code", func(t *testing.T, s *Store, clk *fakeclock.Clock) {
			for _, c := range []string{"21212121", "31313131"} {
				_, err := s.IssueCode(issue(app, email, c, true))
				require.NoError(t, err)
			}
			require.NoError(t, s.UseCode(app, email, macOf("31313131"), testAttempts))
			// A client retrying after a lost answer, more often than the wrong-code limit.
			for range 5 {
				require.ErrorIs(t, s.UseCode(app, email, macOf("31313131"), testAttempts), ErrCodeUsed)
			}
			c, issued, err := s.TestCode(issue(app, email, "41414141", true))
			require.NoError(t, err)
			require.False(t, issued)
			require.Equal(t, "21212121", c.Plain, "a used code is never handed out again")
			require.NoError(t, s.UseCode(app, email, macOf("21212121"), testAttempts), "not locked by the retries")
			clk.Add(30 * time.Minute)
			require.ErrorIs(t, s.UseCode(app, email, macOf("31313131"), testAttempts), ErrCodeUsed, "until its retention ends")
			clk.Add(30 * time.Minute)
			n, err := s.SweepCodes(10)
			require.NoError(t, err)
			require.Equal(t, 2, n)
			require.ErrorIs(t, s.UseCode(app, email, macOf("31313131"), testAttempts), ErrNotFound)
			empty := true
			require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
				k, _ := tx.Bucket(bucketCodes).Cursor().First()
				empty = k == nil
				return nil
			}))
			require.True(t, empty, "the sweep left entries in the codes bucket")
		}},
		{"three newest stay valid, the fourth oldest does not", func(t *testing.T, s *Store, _ *fakeclock.Clock) {
			for _, c := range []string{"00000001", "00000002", "00000003", "00000004"} {
				_, err := s.IssueCode(issue(app, email, c, false))
				require.NoError(t, err)
			}
			require.ErrorIs(t, s.UseCode(app, email, macOf("00000001"), testAttempts), ErrCodeMismatch)
			for _, c := range []string{"00000002", "00000004", "00000003"} {
				require.NoError(t, s.UseCode(app, email, macOf(c), testAttempts), c)
			}
		}},
		{"expired code answers expired, then is swept", func(t *testing.T, s *Store, clk *fakeclock.Clock) {
			_, err := s.IssueCode(issue(app, email, "22222222", false))
			require.NoError(t, err)
			clk.Add(30 * time.Minute)
			require.ErrorIs(t, s.UseCode(app, email, macOf("22222222"), testAttempts), ErrCodeExpired)
			n, err := s.SweepCodes(10)
			require.NoError(t, err)
			require.Zero(t, n, "kept for Retain after expiry")
			clk.Add(30 * time.Minute)
			n, err = s.SweepCodes(10)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			require.ErrorIs(t, s.UseCode(app, email, macOf("22222222"), testAttempts), ErrNotFound)
		}},
		{"codes are per address and per app", func(t *testing.T, s *Store, _ *fakeclock.Clock) {
			_, err := s.IssueCode(issue(app, email, "33333333", false))
			require.NoError(t, err)
			require.ErrorIs(t, s.UseCode(app, "b@example.com", macOf("33333333"), testAttempts), ErrNotFound)
			other := bytes.Repeat([]byte{2}, 32)
			require.ErrorIs(t, s.UseCode(other, email, macOf("33333333"), testAttempts), ErrNotFound)
			require.NoError(t, s.UseCode(app, email, macOf("33333333"), testAttempts))
		}},
		{"withdrawn code is gone", func(t *testing.T, s *Store, _ *fakeclock.Clock) {
			c, err := s.IssueCode(issue(app, email, "44444444", false))
			require.NoError(t, err)
			require.NoError(t, s.WithdrawCode(app, email, c.ID))
			require.NoError(t, s.WithdrawCode(app, email, c.ID), "idempotent")
			require.ErrorIs(t, s.UseCode(app, email, macOf("44444444"), testAttempts), ErrNotFound)
		}},
		{"test code: newest unexpired, else a new one", func(t *testing.T, s *Store, clk *fakeclock.Clock) {
			c, issued, err := s.TestCode(issue(app, email, "55555555", true))
			require.NoError(t, err)
			require.True(t, issued)
			require.Equal(t, "55555555", c.Plain)
			_, err = s.IssueCode(issue(app, email, "66666666", true))
			require.NoError(t, err)
			c, issued, err = s.TestCode(issue(app, email, "77777777", true))
			require.NoError(t, err)
			require.False(t, issued)
			require.Equal(t, "66666666", c.Plain)
			clk.Add(31 * time.Minute)
			c, issued, err = s.TestCode(issue(app, email, "88888888", true))
			require.NoError(t, err)
			require.True(t, issued)
			require.Equal(t, "88888888", c.Plain)
		}},
		{"lock after wrong codes, even for the right code, and it ends", func(t *testing.T, s *Store, clk *fakeclock.Clock) {
			_, err := s.IssueCode(issue(app, email, "99999999", false))
			require.NoError(t, err)
			for range 3 {
				require.ErrorIs(t, s.UseCode(app, email, macOf("00000000"), testAttempts), ErrCodeMismatch)
			}
			err = s.UseCode(app, email, macOf("99999999"), testAttempts)
			var te *ThrottleError
			require.ErrorAs(t, err, &te)
			require.Equal(t, ReasonLocked, te.Reason)
			require.Equal(t, 15*time.Minute, te.RetryAfter)
			_, err = s.IssueCode(Issue{AppID: app, Email: email, MAC: macOf("1"), TTL: time.Minute, Keep: 3,
				Limits: &SendLimits{}, Attempts: testAttempts})
			require.ErrorIs(t, err, ErrThrottled, "sending is refused while locked")
			clk.Add(15 * time.Minute)
			require.NoError(t, s.UseCode(app, email, macOf("99999999"), testAttempts))
		}},
		{"success resets the wrong-code count", func(t *testing.T, s *Store, _ *fakeclock.Clock) {
			for _, c := range []string{"12121212", "13131313"} {
				_, err := s.IssueCode(issue(app, email, c, false))
				require.NoError(t, err)
			}
			for range 2 {
				require.ErrorIs(t, s.UseCode(app, email, macOf("00000000"), testAttempts), ErrCodeMismatch)
			}
			require.NoError(t, s.UseCode(app, email, macOf("12121212"), testAttempts))
			for range 2 {
				require.ErrorIs(t, s.UseCode(app, email, macOf("00000000"), testAttempts), ErrCodeMismatch)
			}
			require.NoError(t, s.UseCode(app, email, macOf("13131313"), testAttempts))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, clk, _, _ := openClocked(t)
			tc.run(t, s, clk)
		})
	}
}

func TestTestCodesSealedAndSurviveReopen(t *testing.T) {
	t.Parallel()
	s, clk, path, mk := openClocked(t)
	app := bytes.Repeat([]byte{3}, 32)
	_, err := s.IssueCode(issue(app, "t@example.com", "31415926", true))
	require.NoError(t, err)
	for range 3 {
		require.ErrorIs(t, s.UseCode(app, "t@example.com", macOf("00000000"), testAttempts), ErrCodeMismatch)
	}
	require.NoError(t, s.Close())

	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NotContains(t, string(raw), "31415926", "test codes are sealed at rest")
	require.NotContains(t, string(raw), "t@example.com", "no address in clear")

	s2, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s2.Close()
	s2.SetClock(clk.Now)
	require.ErrorIs(t, s2.UseCode(app, "t@example.com", macOf("31415926"), testAttempts), ErrThrottled, "lock survives a restart")
	c, issued, err := s2.TestCode(issue(app, "t@example.com", "27182818", true))
	require.NoError(t, err)
	require.False(t, issued)
	require.Equal(t, "31415926", c.Plain)
}

func TestSealedCodeBoundToItsKey(t *testing.T) {
	t.Parallel()
	s, _, _, _ := openClocked(t)
	app := bytes.Repeat([]byte{4}, 32)
	_, err := s.IssueCode(issue(app, "x@example.com", "10101010", true))
	require.NoError(t, err)
	// Move the sealed code to another address's key: opening it must fail.
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCodes)
		from := codeKey(app, addrKey("x@example.com"), 1)
		v := append([]byte(nil), b.Get(from)...)
		require.NotEmpty(t, v)
		return b.Put(codeKey(app, addrKey("y@example.com"), 1), v)
	}))
	_, _, err = s.TestCode(issue(app, "y@example.com", "20202020", true))
	require.True(t, errors.Is(err, ErrSealed), "got %v", err)
}

func TestDeleteAppRemovesCodesAndCounters(t *testing.T) {
	t.Parallel()
	s, _, _, _ := openClocked(t)
	a, b := testApp(5), testApp(6)
	require.NoError(t, s.CreateApp(a))
	require.NoError(t, s.CreateApp(b))
	lim := &SendLimits{Address: Window{Max: 5, Per: time.Hour}, App: Window{Max: 5, Per: time.Hour}}
	for _, app := range []App{a, b} {
		in := issue(app.ID, "d@example.com", "12345678", true)
		in.Limits = lim
		_, err := s.IssueCode(in)
		require.NoError(t, err)
		require.ErrorIs(t, s.UseCode(app.ID, "d@example.com", macOf("0"), testAttempts), ErrCodeMismatch)
	}
	require.NoError(t, s.DeleteApp(a.ID))
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		for _, name := range [][]byte{bucketCodes, bucketThrottle} {
			var left, others int
			require.NoError(t, tx.Bucket(name).ForEach(func(k, _ []byte) error {
				if bytes.HasPrefix(k, a.ID) {
					left++
				} else {
					require.True(t, bytes.HasPrefix(k, b.ID), "every key starts with an app ID")
					others++
				}
				return nil
			}))
			require.Zero(t, left, "bucket %s", name)
			require.Positive(t, others, "bucket %s", name)
		}
		return nil
	}))
}

func TestSweepCodesAcrossAppsInBatches(t *testing.T) {
	t.Parallel()
	s, clk, _, _ := openClocked(t)
	for id := byte(1); id <= 3; id++ {
		app := bytes.Repeat([]byte{id}, 32)
		for i := range 4 {
			_, err := s.IssueCode(issue(app, string(rune('a'+i))+"@example.com", "11112222", false))
			require.NoError(t, err)
		}
	}
	keep := bytes.Repeat([]byte{9}, 32)
	clk.Add(30 * time.Minute)
	_, err := s.IssueCode(issue(keep, "k@example.com", "11112222", false))
	require.NoError(t, err)
	clk.Add(31 * time.Minute)
	n, err := s.SweepCodes(5)
	require.NoError(t, err)
	require.Equal(t, 12, n)
	require.ErrorIs(t, s.UseCode(keep, "k@example.com", macOf("11112222"), testAttempts), ErrCodeExpired,
		"a code still within its retention is kept")
}
