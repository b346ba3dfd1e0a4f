package verification_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/store"
)

func TestCodeLifecycleThroughHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		run  func(t *testing.T, e *env)
	}{
		{"single use", func(t *testing.T, e *env) {
			a := e.createApp(t, false, store.AppOptions{})
			c := e.sendOK(t, a, "one@example.com")
			require.Equal(t, http.StatusOK, e.verify(t, a, "one@example.com", c).Status)
			r := e.verify(t, a, "one@example.com", c)
			require.Equal(t, http.StatusConflict, r.Status)
			require.Equal(t, "verification_code_used", r.ErrorCode(t))
			require.Equal(t, "verification_code_not_found", e.verify(t, a, "one@example.com", "12345678").ErrorCode(t), "nothing pending")
		}},
		{"a right code sent again is not a wrong code", func(t *testing.T, e *env) {
			// A client whose answer was lost retries, more often than the wrong-code limit,
			// while the address has another code pending (a resend).
			a := e.createApp(t, false, store.AppOptions{})
			first := e.sendOK(t, a, "retry@example.com")
			second := e.sendOK(t, a, "retry@example.com")
			require.Equal(t, http.StatusOK, e.verify(t, a, "retry@example.com", second).Status)
			for range 5 {
				require.Equal(t, "verification_code_used", e.verify(t, a, "retry@example.com", second).ErrorCode(t))
			}
			require.Equal(t, http.StatusOK, e.verify(t, a, "retry@example.com", first).Status, "the address is not locked")
			m := apptest.Do(t, e.App, "GET", "/metrics", nil)
			require.Contains(t, string(m.Body), `idvault_verification_verifies_total{result="used"} 5`)
			require.Contains(t, string(m.Body), `idvault_verification_verifies_total{result="wrong"} 0`)
		}},
		{"the three newest codes stay valid, the fourth oldest does not", func(t *testing.T, e *env) {
			a := e.createApp(t, false, store.AppOptions{})
			var codes []string
			for range 4 {
				codes = append(codes, e.sendOK(t, a, "four@example.com"))
				e.Clock.Add(time.Minute)
			}
			require.Equal(t, "invalid_verification_code", e.verify(t, a, "four@example.com", codes[0]).ErrorCode(t))
			for _, i := range []int{1, 3, 2} {
				require.Equal(t, http.StatusOK, e.verify(t, a, "four@example.com", codes[i]).Status, "code %d", i)
			}
		}},
		{"a code expires after code_ttl", func(t *testing.T, e *env) {
			a := e.createApp(t, false, store.AppOptions{})
			c := e.sendOK(t, a, "late@example.com")
			e.Clock.Add(30*time.Minute - time.Second)
			fresh := e.sendOK(t, a, "late@example.com")
			e.Clock.Add(time.Second)
			require.Equal(t, "verification_code_expired", e.verify(t, a, "late@example.com", c).ErrorCode(t))
			require.Equal(t, http.StatusOK, e.verify(t, a, "late@example.com", fresh).Status)
		}},
		{"codes are bound to the app and the address", func(t *testing.T, e *env) {
			a, b := e.createApp(t, false, store.AppOptions{}), e.createApp(t, false, store.AppOptions{})
			c := e.sendOK(t, a, "mine@example.com")
			require.Equal(t, "verification_code_not_found", e.verify(t, b, "mine@example.com", c).ErrorCode(t))
			require.Equal(t, "verification_code_not_found", e.verify(t, a, "yours@example.com", c).ErrorCode(t))
			require.Equal(t, http.StatusOK, e.verify(t, a, "mine@example.com", c).Status)
		}},
		{"the code config is honoured", func(t *testing.T, e *env) {
			a := e.createApp(t, true, store.AppOptions{})
			c := e.testCode(t, a, "ttl@example.com")
			e.Clock.Add(2 * time.Minute)
			require.Equal(t, "verification_code_expired", e.verify(t, a, "ttl@example.com", c).ErrorCode(t))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opt func(*setup)
			if strings.Contains(tc.name, "config") {
				opt = func(s *setup) { s.cfg.CodeTTL = 2 * time.Minute }
			}
			tc.run(t, newEnv(t, opt))
		})
	}
}

func TestLockAfterWrongCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, false, store.AppOptions{})
	const to = "locked@example.com"
	c := e.sendOK(t, a, to)
	for range 3 {
		require.Equal(t, "invalid_verification_code", e.verify(t, a, to, "00000000").ErrorCode(t))
	}
	r := e.verify(t, a, to, c)
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, "too_many_attempts", r.ErrorCode(t), "even the right code is refused")
	require.Equal(t, "900", r.Header.Get("Retry-After"))

	r = e.send(t, a, emailData(to))
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, "max_attempts_reached", r.ErrorCode(t))
	require.Equal(t, "900", r.Header.Get("Retry-After"))
	require.Contains(t, string(r.Body), "retry in 15m0s")
	require.Equal(t, http.StatusOK, e.send(t, a, emailData("other@example.com")).Status, "other addresses are not locked")

	// The lock survives a restart: reopen the data file under a new handler.
	path := e.Store.Path()
	require.NoError(t, e.Store.Close())
	st, err := store.Open(store.Options{Path: path, MasterKey: e.MasterKey})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	st.SetClock(e.Clock.Now)
	e.Store = st
	e.Apps, err = apps.NewRegistry(st, nil)
	require.NoError(t, err)
	e.build(t, st)
	require.Equal(t, filepath.Clean(path), filepath.Clean(st.Path()))
	require.Equal(t, "too_many_attempts", e.verify(t, a, to, c).ErrorCode(t))

	e.Clock.Add(15 * time.Minute)
	require.Equal(t, http.StatusOK, e.verify(t, a, to, c).Status, "the lock ends")
}

func TestWrongCodeCountRestartsOnSuccess(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, true, store.AppOptions{})
	const to = "reset@example.com"
	for range 3 {
		c := e.testCode(t, a, to)
		for range 2 {
			require.Equal(t, "invalid_verification_code", e.verify(t, a, to, "99999999x").ErrorCode(t))
		}
		require.Equal(t, http.StatusOK, e.verify(t, a, to, c).Status)
	}
}

func TestTestCodeRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, true, store.AppOptions{})
	const to = "tester@example.com"

	c1 := e.testCode(t, a, to)
	require.Equal(t, c1, e.testCode(t, a, " tester@EXAMPLE.com"), "the newest unexpired code, for the normalised address")
	require.Zero(t, e.SMTP.MessageCount(), "no mail for /code")

	sent := e.sendOK(t, a, to)
	require.Equal(t, sent, e.testCode(t, a, to), "the newest code is the one just mailed")
	require.Equal(t, http.StatusOK, e.verify(t, a, to, sent).Status)
	require.Equal(t, c1, e.testCode(t, a, to), "the older code is still valid and returned")
	require.Equal(t, http.StatusOK, e.verify(t, a, to, c1).Status)

	c2 := e.testCode(t, a, to)
	require.NotEqual(t, c1, c2, "all used: a new code")
	e.Clock.Add(30 * time.Minute)
	require.NotEqual(t, c2, e.testCode(t, a, to), "expired: a new code")
}

// TestConcurrentVerifies: a code is used once however many requests race for it, and racing
// wrong guesses cannot exceed the limit (each check is one store transaction).
func TestConcurrentVerifies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, true, store.AppOptions{})
	race := func(email string, code func(i int) string) map[string]int {
		var mu sync.Mutex
		got := map[string]int{}
		var wg sync.WaitGroup
		for i := range 10 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.verify(t, a, email, code(i))
				key := "ok"
				if r.Status != http.StatusOK {
					var b struct{ Error struct{ Code string } }
					_ = json.Unmarshal(r.Body, &b)
					key = b.Error.Code
				}
				mu.Lock()
				got[key]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		return got
	}
	c := e.testCode(t, a, "race@example.com")
	require.Equal(t, map[string]int{"ok": 1, "verification_code_used": 9},
		race("race@example.com", func(int) string { return c }))

	e.testCode(t, a, "guess@example.com")
	require.Equal(t, map[string]int{"invalid_verification_code": 3, "too_many_attempts": 7},
		race("guess@example.com", func(i int) string { return fmt.Sprintf("%08d", i) }))
}

func TestSweepForgetsOldCodes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.createApp(t, false, store.AppOptions{})
	c := e.sendOK(t, a, "old@example.com")
	e.Clock.Add(30 * time.Minute)
	require.NoError(t, e.Handler.Sweep())
	require.Equal(t, "verification_code_expired", e.verify(t, a, "old@example.com", c).ErrorCode(t), "kept code_ttl after expiry")
	e.Clock.Add(30 * time.Minute)
	require.NoError(t, e.Handler.Sweep())
	require.Equal(t, "verification_code_not_found", e.verify(t, a, "old@example.com", c).ErrorCode(t))
}
