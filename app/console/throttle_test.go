package console_test

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/fakeclock"
	"github.com/idvault/idvault/app/server"
)

// newThrottledFixture is a console whose admin token throttle (4 wrong tokens → 15 minutes)
// runs on clock. In-memory requests come from 0.0.0.0, a trusted proxy here, so
// X-Forwarded-For names the client.
func newThrottledFixture(t *testing.T, clock *fakeclock.Clock) *fixture {
	env := apptest.New(t)
	app := env.Server(func(d *server.Deps) {
		d.Server.TrustedProxies = []string{"0.0.0.0"}
		d.Admin = admin.New(env.Apps, env.Store, adminToken, admin.Options{
			MaxWrongTokens: 4, WrongTokenWindow: 10 * time.Minute, LockDuration: 15 * time.Minute,
			TrustedProxies: d.Server.TrustedProxies, Logger: env.Log, Now: clock.Now,
		})
		d.Console = server.ConsoleSettings{Enabled: true, Version: "test", DataFile: env.Store.Path()}
	})
	return &fixture{env: env, app: app}
}

func (f *fixture) signInFrom(t *testing.T, ip, tok string) apptest.Response {
	t.Helper()
	return f.form(t, "/console/login", "", url.Values{"token": {tok}}, "X-Forwarded-For", ip)
}

func (f *fixture) apiFrom(t *testing.T, ip, tok string) apptest.Response {
	t.Helper()
	return apptest.Do(t, f.app, http.MethodGet, "/admin/apps", nil, "Authorization", "Bearer "+tok, "X-Forwarded-For", ip)
}

func requireLockedPage(t *testing.T, r apptest.Response, wait time.Duration, says string) {
	t.Helper()
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, strconv.Itoa(int(wait.Seconds())), r.Header.Get("Retry-After"))
	require.Empty(t, r.Header.Get("Set-Cookie"), "no session while locked")
	require.Contains(t, r.Header.Get("Content-Type"), "text/html")
	require.Contains(t, string(r.Body), "Too many wrong admin tokens were sent from your address")
	require.Contains(t, string(r.Body), says)
	require.Contains(t, string(r.Body), `name="token"`, "the sign-in form is still there")
}

// Guessing on the console and on the API is one attack: both count against one lock, which
// refuses the right token on both until it ends.
func TestConsoleAndAPIShareTheWrongTokenCount(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New()
	f := newThrottledFixture(t, clock)
	const ip = "203.0.113.9"
	for i := range 2 {
		r := f.signInFrom(t, ip, "console-guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, r.Status)
		require.Contains(t, string(r.Body), "Wrong admin token")
	}
	for i := range 2 {
		r := f.apiFrom(t, ip, "api-guess-"+strconv.Itoa(i))
		require.Equal(t, http.StatusUnauthorized, r.Status)
	}

	requireLockedPage(t, f.signInFrom(t, ip, adminToken), 15*time.Minute, "15 minutes")
	r := f.apiFrom(t, ip, adminToken)
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, "admin_locked", r.ErrorCode(t))

	r = f.signInFrom(t, "198.51.100.4", adminToken)
	require.Equal(t, http.StatusSeeOther, r.Status, "another address signs in")

	clock.Add(14*time.Minute + 30*time.Second)
	requireLockedPage(t, f.signInFrom(t, ip, adminToken), 30*time.Second, "30 seconds")
	clock.Add(30 * time.Second)
	r = f.signInFrom(t, ip, adminToken)
	require.Equal(t, http.StatusSeeOther, r.Status, "the lock ended")
	require.Contains(t, r.Header.Get("Set-Cookie"), "idvault_console=")

	log := f.env.LogBuf.String()
	require.NotContains(t, log, adminToken)
	require.NotContains(t, log, "guess-")
}

// Console guesses alone lock the admin API too.
func TestConsoleGuessesLockTheAPI(t *testing.T) {
	t.Parallel()
	f := newThrottledFixture(t, fakeclock.New())
	for range 4 {
		require.Equal(t, http.StatusUnauthorized, f.signInFrom(t, "203.0.113.9", "guess").Status)
	}
	r := f.apiFrom(t, "203.0.113.9", adminToken)
	require.Equal(t, http.StatusTooManyRequests, r.Status)
	require.Equal(t, "900", r.Header.Get("Retry-After"))
	require.Equal(t, "admin_locked", r.ErrorCode(t))
}
