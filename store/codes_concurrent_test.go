package store

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	bolt "go.etcd.io/bbolt"
)

// Code writes share the group commit: these tests run them concurrently, and force groups in
// which a write fails, to check that no outcome is lost, doubled or acknowledged before its
// commit.

// race runs fn n times at once (released together) and returns the errors, by index.
func race(n int, fn func(i int) error) []error {
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

func TestConcurrentUsesOfOneCodeExactlyOneSucceeds(t *testing.T) {
	t.Parallel()
	s, _, _, _ := openClocked(t)
	app := bytes.Repeat([]byte{1}, 32)
	att := AttemptLimits{MaxWrong: 1000, Lock: time.Minute}
	const users = 32
	for round := range 10 {
		// In odd rounds the address has a second code pending: the losers' code is still
		// "already used", not a wrong code.
		email := fmt.Sprintf("r%d@example.com", round)
		_, err := s.IssueCode(issue(app, email, "24682468", false))
		require.NoError(t, err)
		other := round%2 == 1
		if other {
			_, err := s.IssueCode(issue(app, email, "13571357", false))
			require.NoError(t, err)
		}
		errs := race(users, func(int) error { return s.UseCode(app, email, macOf("24682468"), att) })
		ok := 0
		for _, err := range errs {
			if err == nil {
				ok++
				continue
			}
			require.ErrorIs(t, err, ErrCodeUsed, "round %d", round)
		}
		require.Equal(t, 1, ok, "round %d: a code is used once", round)
		require.Zero(t, attemptsOf(t, s, app, email, att).wrong, "round %d: no loser counted as a wrong code", round)
		if other {
			require.NoError(t, s.UseCode(app, email, macOf("13571357"), att), "the other code is intact")
		}
	}
}

// attemptsOf reads the wrong-code state of an address.
func attemptsOf(t *testing.T, s *Store, app []byte, email string, att AttemptLimits) attempts {
	t.Helper()
	var a attempts
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		a = getAttempts(tx, throttleKey(app, kindAttempts, addrKey(email)), att, s.now())
		return nil
	}))
	return a
}

func TestConcurrentWrongCodesCountExactly(t *testing.T) {
	t.Parallel()
	const wrong = 24
	app := bytes.Repeat([]byte{2}, 32)
	tests := []struct {
		name     string
		maxWrong int
		locked   bool
	}{
		{"one below the limit: counted, not locked", wrong + 1, false},
		{"at the limit: locked", wrong, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, _, _, _ := openClocked(t)
			att := AttemptLimits{MaxWrong: tc.maxWrong, Lock: time.Hour}
			_, err := s.IssueCode(issue(app, "w@example.com", "11223344", false))
			require.NoError(t, err)
			errs := race(wrong, func(i int) error {
				return s.UseCode(app, "w@example.com", macOf(fmt.Sprintf("bad%d", i)), att)
			})
			for _, err := range errs {
				require.ErrorIs(t, err, ErrCodeMismatch)
			}
			a := attemptsOf(t, s, app, "w@example.com", att)
			require.EqualValues(t, wrong, a.wrong, "every wrong code counted once")
			err = s.UseCode(app, "w@example.com", macOf("11223344"), att)
			if tc.locked {
				require.ErrorIs(t, err, ErrThrottled)
			} else {
				require.NoError(t, err)
				require.Zero(t, attemptsOf(t, s, app, "w@example.com", att).wrong, "success clears the count")
			}
		})
	}
}

// windowOf reads a send window's count.
func windowOf(t *testing.T, s *Store, key []byte) uint32 {
	t.Helper()
	var n uint32
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		n = getWindow(tx, key).count
		return nil
	}))
	return n
}

func TestConcurrentSendsShareCommitsAndNothingIsLost(t *testing.T) {
	t.Parallel()
	s, clk, path, mk := openClocked(t)
	app := bytes.Repeat([]byte{3}, 32)
	lim := SendLimits{Address: Window{Max: 5, Per: time.Hour}, App: Window{Max: 10_000, Per: time.Hour}}
	send := func(email, code string) (Code, error) {
		in := issue(app, email, code, false)
		in.Limits = &lim
		return s.IssueCode(in)
	}
	const senders, each = 32, 10
	before := s.RecordCommits()
	errs := race(senders, func(g int) error {
		for i := range each {
			if _, err := send(fmt.Sprintf("s%d-%d@example.com", g, i), fmt.Sprintf("%08d", g*each+i)); err != nil {
				return err
			}
		}
		return nil
	})
	for _, err := range errs {
		require.NoError(t, err)
	}
	d := s.RecordCommits().Sub(before)
	require.Equal(t, int64(senders*each), d.Writes)
	require.Less(t, d.Commits, d.Writes, "some sends shared a commit")

	// 32 sends at once to one address: exactly its window's 5 pass.
	var passed atomic.Int32
	errs = race(senders, func(i int) error {
		_, err := send("one@example.com", fmt.Sprintf("9%07d", i))
		if err == nil {
			passed.Add(1)
		}
		return err
	})
	for _, err := range errs {
		var te *ThrottleError
		if err != nil {
			require.ErrorAs(t, err, &te)
			require.Equal(t, ReasonAddress, te.Reason)
		}
	}
	require.EqualValues(t, 5, passed.Load())
	require.EqualValues(t, 5, windowOf(t, s, throttleKey(app, kindAddrWindow, addrKey("one@example.com"))))
	require.EqualValues(t, senders*each+5, windowOf(t, s, throttleKey(app, kindAppWindow, nil)), "every send counted once")
	require.NoError(t, s.Close())

	// Every acknowledged code is on disk.
	s, err := Open(Options{Path: path, MasterKey: mk})
	require.NoError(t, err)
	defer s.Close()
	s.SetClock(clk.Now)
	for g := range senders {
		for i := range each {
			email := fmt.Sprintf("s%d-%d@example.com", g, i)
			require.NoError(t, s.UseCode(app, email, macOf(fmt.Sprintf("%08d", g*each+i)), testAttempts), email)
		}
	}
}

// heldGroup holds the group commit: a write whose transaction stays open until release, so that
// the writes queued meanwhile then share one transaction, in the order they were queued.
type heldGroup struct {
	t       *testing.T
	s       *Store
	release chan struct{}
	held    chan error
	queued  int
	wg      sync.WaitGroup
	before  CommitStats
}

func holdGroup(t *testing.T, s *Store) *heldGroup {
	h := &heldGroup{t: t, s: s, release: make(chan struct{}), held: make(chan error, 1)}
	entered := make(chan struct{})
	var once sync.Once
	go func() {
		h.held <- s.group.update(func(*bolt.Tx) error {
			once.Do(func() { close(entered) })
			<-h.release
			return nil
		})
	}()
	<-entered
	h.before = s.RecordCommits()
	return h
}

// queue starts fn (a write) and returns once it waits in the group commit's queue.
func (h *heldGroup) queue(fn func()) {
	h.queued++
	h.wg.Go(fn)
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.s.group.mu.Lock()
		n := len(h.s.group.queue)
		h.s.group.mu.Unlock()
		if n == h.queued {
			return
		}
		require.True(h.t, time.Now().Before(deadline), "write %d never queued", h.queued)
		time.Sleep(time.Millisecond)
	}
}

// done releases the group and waits for the queued writes; they ran as one group.
func (h *heldGroup) done() {
	close(h.release)
	require.NoError(h.t, <-h.held)
	h.wg.Wait()
	d := h.s.RecordCommits().Sub(h.before)
	require.EqualValues(h.t, 1, d.Commits, "the queued writes made one group")
	require.EqualValues(h.t, h.queued, d.Writes)
}

// probe is a write beside the code writes of a group: it counts its runs, puts a key in the meta
// bucket and returns fail.
func probe(s *Store, runs *atomic.Int32, key string, fail error) error {
	return s.group.update(func(tx *bolt.Tx) error {
		runs.Add(1)
		if err := tx.Bucket(bucketMeta).Put([]byte(key), []byte("x")); err != nil {
			return err
		}
		return fail
	})
}

func metaHas(t *testing.T, s *Store, key string) bool {
	t.Helper()
	var has bool
	require.NoError(t, s.db.View(func(tx *bolt.Tx) error {
		has = tx.Bucket(bucketMeta).Get([]byte(key)) != nil
		return nil
	}))
	return has
}

// A write that fails after writing rolls its group back; every code write of the group then
// runs again alone and its outcome is counted once.
func TestCodeWritesOfAFailedGroupRunAgainOnce(t *testing.T) {
	t.Parallel()
	s, _, _, _ := openClocked(t)
	app := bytes.Repeat([]byte{4}, 32)
	lim := SendLimits{Address: Window{Max: 5, Per: time.Hour}, App: Window{Max: 5, Per: time.Hour}}
	_, err := s.IssueCode(issue(app, "use@example.com", "10203040", false))
	require.NoError(t, err)
	_, err = s.IssueCode(issue(app, "wrong@example.com", "50607080", false))
	require.NoError(t, err)

	var useErr, wrongErr, sendErr, testErr, probeErr error
	var sent, tested Code
	var runs atomic.Int32
	boom := errors.New("boom")
	h := holdGroup(t, s)
	h.queue(func() { wrongErr = s.UseCode(app, "wrong@example.com", macOf("00000000"), testAttempts) })
	h.queue(func() {
		in := issue(app, "new@example.com", "90909090", false)
		in.Limits = &lim
		sent, sendErr = s.IssueCode(in)
	})
	h.queue(func() { useErr = s.UseCode(app, "use@example.com", macOf("10203040"), testAttempts) })
	h.queue(func() { tested, _, testErr = s.TestCode(issue(app, "test@example.com", "31313131", true)) })
	h.queue(func() { probeErr = probe(s, &runs, "boom", boom) })
	h.done()

	require.ErrorIs(t, probeErr, boom)
	require.EqualValues(t, 2, runs.Load(), "the failing write ran in the group, then alone")
	require.False(t, metaHas(t, s, "boom"), "its write rolled back")

	require.ErrorIs(t, wrongErr, ErrCodeMismatch)
	require.EqualValues(t, 1, attemptsOf(t, s, app, "wrong@example.com", testAttempts).wrong, "counted once")
	require.NoError(t, useErr)
	require.ErrorIs(t, s.UseCode(app, "use@example.com", macOf("10203040"), testAttempts), ErrCodeUsed, "used")
	require.NoError(t, sendErr)
	require.NotZero(t, sent.ID)
	require.EqualValues(t, 1, windowOf(t, s, throttleKey(app, kindAppWindow, nil)), "the send counted once")
	require.EqualValues(t, 1, windowOf(t, s, throttleKey(app, kindAddrWindow, addrKey("new@example.com"))))
	require.NoError(t, s.UseCode(app, "new@example.com", macOf("90909090"), testAttempts))
	require.NoError(t, testErr)
	c, issued, err := s.TestCode(issue(app, "test@example.com", "00000000", true))
	require.NoError(t, err)
	require.False(t, issued)
	require.Equal(t, tested.ID, c.ID, "one test code stored")
	require.Equal(t, "31313131", c.Plain)
}

// A code write that fails before writing anything (here on a corrupt stored code) fails alone:
// the rest of its group commits without running again.
func TestCodeWriteErrorsBeforeWritingFailAlone(t *testing.T) {
	t.Parallel()
	s, _, _, _ := openClocked(t)
	app := bytes.Repeat([]byte{5}, 32)
	const bad = "corrupt@example.com"
	require.NoError(t, s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCodes).Put(codeKey(app, addrKey(bad), 99), []byte("short"))
	}))

	var useErr, testErr, withdrawErr, refundErr, sendErr, probeErr error
	var runs atomic.Int32
	h := holdGroup(t, s)
	// The probe first: it runs in the group's transaction, and would run again alone if any
	// failure below rolled the group back.
	h.queue(func() { probeErr = probe(s, &runs, "ok", nil) })
	h.queue(func() { useErr = s.UseCode(app, bad, macOf("12121212"), testAttempts) })
	h.queue(func() { _, _, testErr = s.TestCode(issue(app, bad, "34343434", true)) })
	h.queue(func() { withdrawErr = s.WithdrawCode(app, bad, 99) })
	h.queue(func() { refundErr = s.WithdrawSend(app, bad, 99, SendLimits{App: Window{Max: 5, Per: time.Hour}}) })
	h.queue(func() { _, sendErr = s.IssueCode(issue(app, "fine@example.com", "56565656", false)) })
	h.done()

	for _, err := range []error{useErr, testErr, withdrawErr, refundErr} {
		require.ErrorContains(t, err, "corrupt verification code")
	}
	require.NoError(t, sendErr)
	require.NoError(t, probeErr)
	require.EqualValues(t, 1, runs.Load(), "the group committed without running again")
	require.True(t, metaHas(t, s, "ok"))
	require.NoError(t, s.UseCode(app, "fine@example.com", macOf("56565656"), testAttempts))
	require.Zero(t, attemptsOf(t, s, app, bad, testAttempts).wrong, "a failed use counts nothing")
}

func TestCodeWithAShortMACIsRefused(t *testing.T) {
	t.Parallel()
	s, _, _, _ := openClocked(t)
	app := bytes.Repeat([]byte{6}, 32)
	lim := SendLimits{App: Window{Max: 5, Per: time.Hour}}
	in := issue(app, "m@example.com", "1", false)
	in.MAC, in.Limits = in.MAC[:16], &lim
	_, err := s.IssueCode(in)
	require.ErrorIs(t, err, errMACSize)
	_, _, err = s.TestCode(in)
	require.ErrorIs(t, err, errMACSize)
	require.Zero(t, windowOf(t, s, throttleKey(app, kindAppWindow, nil)), "a refused send consumes nothing")
	require.ErrorIs(t, s.UseCode(app, "m@example.com", macOf("1"), testAttempts), ErrNotFound, "nothing stored")
}
