package admin_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/fakeclock"
	"github.com/idvault/idvault/app/server"
)

// throttled is an admin API whose wrong-token throttle runs on a test clock. In-memory
// requests come from 0.0.0.0, listed as a trusted proxy, so X-Forwarded-For names the client.
type throttled struct {
	env   *apptest.Env
	app   *fiber.App
	clock *fakeclock.Clock
}

const maxWrong, window, lock = 4, 10 * time.Minute, 15 * time.Minute

func newThrottled(t *testing.T) *throttled { return newThrottledBehind(t, []string{"0.0.0.0"}) }

func newThrottledBehind(t *testing.T, proxies []string) *throttled {
	env := apptest.New(t)
	clock := fakeclock.New()
	app := env.Server(func(d *server.Deps) {
		d.Server.TrustedProxies = proxies
		d.Admin = admin.New(env.Apps, env.Store, token, admin.Options{
			MaxWrongTokens: maxWrong, WrongTokenWindow: window, LockDuration: lock,
			TrustedProxies: d.Server.TrustedProxies, Logger: env.Log, Now: clock.Now,
		})
	})
	return &throttled{env: env, app: app, clock: clock}
}

// list sends GET /admin/apps with tok from client ip.
func (f *throttled) list(t *testing.T, ip, tok string) apptest.Response {
	t.Helper()
	return apptest.Do(t, f.app, http.MethodGet, "/admin/apps", nil, "Authorization", "Bearer "+tok, "X-Forwarded-For", ip)
}

func (f *throttled) wrong(t *testing.T, ip string, n int) {
	t.Helper()
	for i := range n {
		r := f.list(t, ip, "wrong-token-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, r.Status, "wrong token %d", i+1)
		require.Equal(t, "invalid_admin_token", r.ErrorCode(t))
	}
}

func requireLocked(t *testing.T, r apptest.Response, wait time.Duration) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status, string(r.Body))
	require.Equal(t, "admin_locked", r.ErrorCode(t))
	require.Equal(t, strconv.Itoa(int(wait.Seconds())), r.Header.Get("Retry-After"))
}

func TestAdminWrongTokensBelowTheLimitDoNotLock(t *testing.T) {
	t.Parallel()
	f := newThrottled(t)
	f.wrong(t, "203.0.113.7", maxWrong-1)
	require.Equal(t, http.StatusOK, f.list(t, "203.0.113.7", token).Status)
	require.Equal(t, http.StatusOK, f.list(t, "203.0.113.7", token).Status, "right tokens never count")
}

func TestAdminTooManyWrongTokensLockTheAddress(t *testing.T) {
	t.Parallel()
	f := newThrottled(t)
	f.wrong(t, "203.0.113.7", maxWrong)
	requireLocked(t, f.list(t, "203.0.113.7", token), lock)
	f.clock.Add(5 * time.Minute)
	requireLocked(t, f.list(t, "203.0.113.7", "another-guess"), lock-5*time.Minute)
	requireLocked(t, f.list(t, "203.0.113.7", ""), lock-5*time.Minute)

	require.Equal(t, http.StatusOK, f.list(t, "198.51.100.2", token).Status, "another address is not locked")
	f.wrong(t, "198.51.100.2", maxWrong-1) // and keeps its own count

	f.clock.Add(lock - 5*time.Minute - time.Second)
	requireLocked(t, f.list(t, "203.0.113.7", token), time.Second)
	f.clock.Add(time.Second)
	require.Equal(t, http.StatusOK, f.list(t, "203.0.113.7", token).Status, "the lock ends")
	f.wrong(t, "203.0.113.7", maxWrong-1) // with a fresh count
	require.Equal(t, http.StatusOK, f.list(t, "203.0.113.7", token).Status)

	log := f.env.LogBuf.String()
	require.NotContains(t, log, token)
	require.NotContains(t, log, "wrong-token-")
	require.Contains(t, log, "ip=203.0.113.7")
}

func TestAdminWrongTokensOutsideTheWindowDoNotAddUp(t *testing.T) {
	t.Parallel()
	f := newThrottled(t)
	f.wrong(t, "203.0.113.7", maxWrong-1)
	f.clock.Add(window)
	f.wrong(t, "203.0.113.7", maxWrong-1)
	require.Equal(t, http.StatusOK, f.list(t, "203.0.113.7", token).Status)
}

func TestAdminEmptyTokensAreNotGuesses(t *testing.T) {
	t.Parallel()
	f := newThrottled(t)
	for range maxWrong * 2 {
		r := apptest.Do(t, f.app, http.MethodGet, "/admin/apps", nil, "X-Forwarded-For", "203.0.113.7")
		require.Equal(t, http.StatusUnauthorized, r.Status)
	}
	require.Equal(t, http.StatusOK, f.list(t, "203.0.113.7", token).Status)
}

// One IPv6 host holds a whole /64: its addresses share one count.
func TestAdminIPv6ClientsCountPerSlash64(t *testing.T) {
	t.Parallel()
	f := newThrottled(t)
	for i := range maxWrong {
		f.wrong(t, "2001:db8:1:2::"+strconv.Itoa(i+1), 1)
	}
	requireLocked(t, f.list(t, "2001:db8:1:2:ffff::1", token), lock)
	require.Equal(t, http.StatusOK, f.list(t, "2001:db8:1:3::1", token).Status, "the next /64 is another client")
}

// One lock is logged once, not once per refused request.
func TestAdminLockIsLoggedOnce(t *testing.T) {
	t.Parallel()
	f := newThrottled(t)
	f.wrong(t, "203.0.113.7", maxWrong)
	for range 20 {
		requireLocked(t, f.list(t, "203.0.113.7", "guess"), lock)
	}
	require.Equal(t, 1, strings.Count(f.env.LogBuf.String(), "address locked"))
}

// /metrics counts wrong tokens, locked refusals and locks.
func TestAdminThrottleMetrics(t *testing.T) {
	t.Parallel()
	f := newThrottled(t)
	f.wrong(t, "203.0.113.7", maxWrong)
	requireLocked(t, f.list(t, "203.0.113.7", token), lock)
	requireLocked(t, f.list(t, "203.0.113.7", token), lock)
	r := apptest.Do(t, f.app, http.MethodGet, "/metrics", nil)
	require.Equal(t, http.StatusOK, r.Status)
	body := string(r.Body)
	require.Contains(t, body, `idvault_admin_auth_refusals_total{reason="wrong_token"} 4`)
	require.Contains(t, body, `idvault_admin_auth_refusals_total{reason="locked"} 2`)
	require.Contains(t, body, "idvault_admin_auth_locks_total 1")
}

// Without a trusted proxy, X-Forwarded-For is the client's own word: changing it does not
// make a new client.
func TestAdminForgedForwardedForDoesNotEscapeTheLock(t *testing.T) {
	t.Parallel()
	f := newThrottledBehind(t, nil)
	for i := range maxWrong {
		f.wrong(t, "192.0.2."+strconv.Itoa(i+1), 1)
	}
	requireLocked(t, f.list(t, "192.0.2.200", token), lock)
}
