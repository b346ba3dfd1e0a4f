package idserver_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
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
	for i := range 3 {
		require.Equal(t, http.StatusOK, share(mallory, "new"+strconv.Itoa(i)+"@example.com").Status)
	}
	resp := share(mallory, "new3@example.com")
	requireError(t, resp, http.StatusTooManyRequests, "this user created too many new identities; try again later")
	wait, err := strconv.Atoi(resp.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.InDelta(t, 3600, wait, 5, "until the window ends")
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
