package idtoken_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/idtoken"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
)

// A key the provider removed is refused once the key set's age has passed: the age is the
// max-age of the set's Cache-Control (less its Age header), bounded by
// identity_server.oidc.keys_min_age and keys_max_age (here the defaults, 1m and 15m). Before
// its age, the cached set serves without asking the provider. Before, a removed key was
// accepted until a token with an unknown kid forced a refetch or an hour had passed.
func TestVerifyRemovedKeyIsRefusedWithinTheKeySetsAge(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		headers map[string]string
		age     time.Duration
	}{
		{map[string]string{"Cache-Control": "public, max-age=120"}, 2 * time.Minute},
		{map[string]string{"Cache-Control": "max-age=5"}, time.Minute},                     // below keys_min_age
		{map[string]string{"Cache-Control": "public, max-age=86400"}, 15 * time.Minute},    // above keys_max_age
		{map[string]string{"Cache-Control": "max-age=600", "Age": "420"}, 3 * time.Minute}, // 7 minutes in a cache on the way
		{nil, time.Minute}, // the provider's no-store
		{map[string]string{"Cache-Control": "must-revalidate"}, 15 * time.Minute},          // no max-age
		{map[string]string{"Cache-Control": "public, max-age=300, no-cache"}, time.Minute}, // no-cache wins
	} {
		t.Run(fmt.Sprint(c.headers), func(t *testing.T) {
			t.Parallel()
			iss := idtokentest.Start(t, 0)
			if c.headers != nil {
				iss.KeySetHeaders(t, c.headers)
			}
			clock := newClock()
			v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{Now: clock.Now})
			old := iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "k@example.com", "email_verified": true,
				"exp": time.Now().Add(time.Hour).Unix()}})
			_, err := verify(t, v, old)
			require.NoError(t, err)
			iss.Rotate(t, "RS256", false) // the old key is removed from the set

			clock.Add(c.age*3/4 - time.Second)
			_, err = verify(t, v, old)
			require.NoError(t, err, "within its age, the cached set serves")
			jwks, _ := iss.Fetches(t)
			require.Equal(t, 1, jwks, "and the provider is not asked")

			clock.Add(c.age/4 + 2*time.Second)
			_, err = verify(t, v, old)
			requireRefused(t, err, idtoken.ErrInvalid, "does not publish")
			jwks, _ = iss.Fetches(t)
			require.GreaterOrEqual(t, jwks, 2, "past its age, the set is fetched again before use")
		})
	}
}

// Past its age, a set whose refresh fails is kept: an outage of the provider does not stop
// tokens under the keys it had published. While the provider stays down, the set is refreshed
// in the background (a request does not wait for the failing fetch), and once the provider is
// back its current keys replace the set.
func TestVerifyKeySetPastItsAgeIsKeptWhileTheProviderIsDown(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	clock := newClock()
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{Now: clock.Now})
	tok := iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "k@example.com", "email_verified": true,
		"exp": time.Now().Add(3 * time.Hour).Unix()}})
	_, err := verify(t, v, tok)
	require.NoError(t, err)
	iss.Stop()
	clock.Add(16 * time.Minute)
	_, err = verify(t, v, tok)
	require.NoError(t, err, "the refresh failed: the old set serves")

	// The provider is back on its port, with other keys: the next use after the 2 s without
	// fetches starts a refresh in the background and is answered from the old set; once the
	// refresh is in, the old key is refused.
	back := idtokentest.Start(t, iss.Port)
	clock.Add(3 * time.Second)
	_, err = verify(t, v, tok)
	require.NoError(t, err, "answered from the old set while the refresh runs")
	deadline := time.Now().Add(20 * time.Second)
	for err == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the refresh runs on its own
		_, err = verify(t, v, tok)
	}
	requireRefused(t, err, idtoken.ErrInvalid, "does not publish")
	jwks, discovery := back.Fetches(t)
	require.Contains(t, []int{1, 2}, jwks, "one background refresh, then the old key's kid refetched at most once")
	require.Zero(t, discovery, "discovery is not read again")
}
