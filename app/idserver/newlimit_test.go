package idserver_test

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/directory"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
	"github.com/idvault/idvault/app/server"
	"github.com/idvault/idvault/store"
)

// A signed-in user makes POST /public_identity create at most new_identities_per_user new
// identities per window; then 429 with Retry-After, while emails that have a record are still
// answered, another user and the app token are not affected, and the refusal is counted.
func TestNewIdentitiesPerSignedInUser(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	f := newFixture(t, withOIDC(iss.URL), func(c *config.IdentityServer) {
		c.OIDC.NewIdentitiesPerUser, c.OIDC.NewIdentitiesWindow = 3, time.Hour
	})
	mallory := iss.IDToken(t, "ES256", audience, "mallory@example.com")
	alice := iss.IDToken(t, "ES256", audience, "alice@example.com")
	f.keep(mallory, alice)
	share := func(token, email string) apptest.Response {
		return idRequest(t, f, http.MethodPost, "/public_identity", email, token)
	}
	start := time.Now() // the window opens at the first creation, on the real clock
	for i := range 3 {
		require.Equal(t, http.StatusOK, share(mallory, "new"+strconv.Itoa(i)+"@example.com").Status)
	}
	resp := share(mallory, "new3@example.com")
	requireError(t, resp, apierr.TooManyNewIdentities, "this user created too many new identities; try again later")
	wait, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	// Until the window ends: an hour less what has passed since it opened (seconds on a loaded
	// machine), rounded up.
	require.LessOrEqual(t, wait, 3600, "until the window ends")
	require.GreaterOrEqual(t, wait, 3600-int(time.Since(start).Seconds())-1, "until the window ends")
	require.Equal(t, 1, counter0(t, f, "idvault_identity_server_new_identities_refused_total"))

	require.Equal(t, http.StatusOK, share(mallory, "new1@example.com").Status, "an email with a record is answered")
	require.Equal(t, http.StatusOK, share(alice, "new3@example.com").Status, "another user has a window of its own")
	require.Equal(t, http.StatusOK, share(mallory, "new3@example.com").Status, "created meanwhile: answered")
	for i := 10; i < 15; i++ {
		r := apptest.Do(t, f.http, http.MethodPost, "/public_identity", map[string]any{"email": "backend" + strconv.Itoa(i) + "@example.com"},
			"Authorization", "Bearer "+appToken)
		require.Equal(t, http.StatusOK, r.Status, "the app token is not bounded")
	}
	require.Equal(t, http.StatusTooManyRequests, share(mallory, "new4@example.com").Status)
	require.Equal(t, 2, counter0(t, f, "idvault_identity_server_new_identities_refused_total"))
	f.requireNothingSecretLogged(t)
}

// POST /public_identity with an ID token reads the email's record once, new or known, within
// the limit or past it: the limit counts a creation before the directory is asked and gives it
// back when the directory's write created no record, instead of looking the email up first. So
// emails that have a record take nothing from the user's allowance.
func TestNewIdentityLimitReadsTheEmailOnce(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	env := apptest.New(t)
	st := &readCounter{Store: env.Store}
	dir := directory.New(st)
	t.Cleanup(dir.Close)
	f := &fixture{env: env, app: env.CreateApp(t, false).App}
	cfg := config.IdentityServer{Enabled: true, AppID: apps.FormatID(f.app.ID)}
	withOIDC(iss.URL)(&cfg)
	cfg.OIDC.NewIdentitiesPerUser, cfg.OIDC.NewIdentitiesWindow = 2, time.Hour
	f.http = env.Server(func(d *server.Deps) {
		d.IdentityServer = idserver.New(f.app.ID, env.Apps, dir, cfg, env.Prom, env.Log)
	})
	t.Cleanup(func() { f.requireNothingSecretLogged(t) })
	mallory := iss.IDToken(t, "ES256", audience, "mallory@example.com")
	f.keep(mallory)
	share := func(email string) (status int, reads int64) {
		before := st.reads.Load()
		resp := idRequest(t, f, http.MethodPost, "/public_identity", email, mallory)
		return resp.Status, st.reads.Load() - before
	}
	for i := range 3 {
		r := idRequest(t, f, http.MethodPost, "/public_identity", "known"+strconv.Itoa(i)+"@example.com", appToken)
		require.Equal(t, http.StatusOK, r.Status)
	}

	for range 2 {
		for i := range 3 {
			status, reads := share("known" + strconv.Itoa(i) + "@example.com")
			require.Equal(t, http.StatusOK, status)
			require.Equal(t, int64(1), reads, "a known email is read once")
		}
	}
	for i := range 2 {
		status, reads := share("new" + strconv.Itoa(i) + "@example.com")
		require.Equal(t, http.StatusOK, status, "known emails took nothing from the allowance")
		require.Equal(t, int64(1), reads, "a new email is read once")
	}
	status, reads := share("new2@example.com")
	require.Equal(t, http.StatusTooManyRequests, status)
	require.Equal(t, int64(1), reads)
	status, reads = share("known0@example.com")
	require.Equal(t, http.StatusOK, status, "past the limit, a known email is answered")
	require.Equal(t, int64(1), reads)
	require.Equal(t, http.StatusOK, idRequest(t, f, http.MethodPost, "/public_identity", "new0@example.com", mallory).Status,
		"and so is an email the user created")
}

// readCounter is the store as the directory sees it, counting the reads of a record.
type readCounter struct {
	*store.Store
	reads atomic.Int64
}

func (s *readCounter) Record(appID []byte, email string) (store.Record, error) {
	s.reads.Add(1)
	return s.Store.Record(appID, email)
}

func (s *readCounter) PrivateRecord(appID []byte, email string) (store.Record, error) {
	s.reads.Add(1)
	return s.Store.PrivateRecord(appID, email)
}

func (s *readCounter) Publics(appID []byte, emails []string) ([]store.Public, error) {
	s.reads.Add(int64(len(emails)))
	return s.Store.Publics(appID, emails)
}

// counter0 reads a counter without labels.
func counter0(t *testing.T, f *fixture, name string) int {
	t.Helper()
	mfs, err := f.env.Prom.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return int(mf.GetMetric()[0].GetCounter().GetValue())
		}
	}
	t.Fatalf("no %s", name)
	return 0
}
