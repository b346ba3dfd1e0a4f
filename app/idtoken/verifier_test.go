package idtoken_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/fakeclock"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idtoken"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
)

const aud = "idvault-web-client"

func oidcConfig(issuer string) config.OIDC {
	c := config.DefaultIdentityServer().OIDC
	c.Issuer, c.Audience = issuer, aud
	c.Algorithms = []string{"RS256", "ES256"}
	return c
}

// verify checks a token with a fresh context bounded in time.
func verify(t *testing.T, v *idtoken.Verifier, raw string) (idtoken.Identity, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return v.Verify(ctx, raw)
}

func requireRefused(t *testing.T, err error, kind error, reason string) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, kind, "%v", err)
	var r *idtoken.Refusal
	require.ErrorAs(t, err, &r)
	require.Contains(t, r.Reason, reason)
}

func TestVerifyAcceptsTokensOfTheProvider(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{})
	for _, alg := range []string{"RS256", "ES256"} {
		id, err := verify(t, v, iss.IDToken(t, alg, aud, "Alice@Example.com"))
		require.NoError(t, err, alg)
		require.Equal(t, "Alice@Example.com", id.Email, "the claim as the token holds it")
		require.Equal(t, "sub-Alice@Example.com", id.Subject)
	}
	// A token minted for several audiences, one of them ours, authorized for us; email_verified
	// as the string some providers send.
	id, err := verify(t, v, iss.Mint(t, idtokentest.Token{Claims: map[string]any{
		"aud": []string{"another-client", aud}, "azp": aud, "email": "bob@example.com", "email_verified": "true"}}))
	require.NoError(t, err)
	require.Equal(t, "bob@example.com", id.Email)
	jwks, discovery := iss.Fetches(t)
	require.Equal(t, 1, jwks, "the key set is fetched once and cached")
	require.Equal(t, 1, discovery)
}

// Every refusal of the item 3, from a real provider.
func TestVerifyRefusals(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	other := idtokentest.Start(t, 0) // a second provider: its tokens name another issuer
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{})
	now := time.Now()
	good := func(more map[string]any) map[string]any {
		c := map[string]any{"aud": aud, "sub": "u1", "email": "u1@example.com", "email_verified": true}
		for k, x := range more {
			c[k] = x
		}
		return c
	}
	for name, c := range map[string]struct {
		token  func() string
		kind   error
		reason string
	}{
		"expired": {func() string {
			return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"iat": now.Add(-time.Hour).Unix(), "exp": now.Add(-10 * time.Minute).Unix()})})
		}, idtoken.ErrInvalid, "expired"},
		"no exp": {func() string { return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"exp": nil})}) }, idtoken.ErrInvalid, "expired"},
		"wrong audience": {func() string {
			return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"aud": "another-client"})})
		}, idtoken.ErrInvalid, "another audience"},
		"wrong issuer, signed by the provider": {func() string {
			return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"iss": "https://evil.example.com"})})
		}, idtoken.ErrInvalid, "another issuer"},
		"another provider's token": {func() string { return other.IDToken(t, "RS256", aud, "u1@example.com") },
			idtoken.ErrInvalid, "does not publish"},
		"alg none": {func() string { return iss.Mint(t, idtokentest.Token{Claims: good(nil), Sign: "none"}) },
			idtoken.ErrInvalid, "algorithm not accepted"},
		"HS256 keyed with the public key": {func() string { return iss.Mint(t, idtokentest.Token{Claims: good(nil), Sign: "hs256-public"}) },
			idtoken.ErrInvalid, "algorithm not accepted"},
		"a key not in the set under a known kid, RS256": {func() string {
			return iss.Mint(t, idtokentest.Token{Claims: good(nil), Sign: "foreign"})
		}, idtoken.ErrInvalid, "bad signature"},
		"a key not in the set under a known kid, ES256": {func() string {
			return iss.Mint(t, idtokentest.Token{Alg: "ES256", Claims: good(nil), Sign: "foreign"})
		}, idtoken.ErrInvalid, "bad signature"},
		"a good token in JWS JSON serialization": {func() string {
			parts := strings.Split(iss.IDToken(t, "RS256", aud, "u1@example.com"), ".")
			return `{"protected":"` + parts[0] + `","payload":"` + parts[1] + `","signature":"` + parts[2] + `"}`
		}, idtoken.ErrInvalid, "malformed"},
		"garbage":    {func() string { return "garbage" }, idtoken.ErrInvalid, "malformed"},
		"three dots": {func() string { return "a.b.c" }, idtoken.ErrInvalid, "malformed"},
		"empty":      {func() string { return "" }, idtoken.ErrInvalid, "malformed"},
		"email_verified false": {func() string {
			return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"email_verified": false})})
		}, idtoken.ErrUnverified, "not verified"},
		"email_verified missing": {func() string {
			return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"email_verified": nil})})
		}, idtoken.ErrUnverified, "not verified"},
		"email_verified the string false": {func() string {
			return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"email_verified": "false"})})
		}, idtoken.ErrUnverified, "not verified"},
		"no email claim": {func() string { return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"email": nil})}) },
			idtoken.ErrNoEmail, "no email claim"},
		"email claim not a string": {func() string { return iss.Mint(t, idtokentest.Token{Claims: good(map[string]any{"email": 42})}) },
			idtoken.ErrNoEmail, "no email claim"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := verify(t, v, c.token())
			requireRefused(t, err, c.kind, c.reason)
		})
	}
}

// azp (OpenID Connect Core 1.0 section 3.1.3.7, items 4 and 5): when present it must be our
// client ID (identity_server.oidc.audience), and a token for several audiences must carry it.
// Tokens for one audience without azp, what most providers mint, stay valid.
func TestVerifyAuthorizedParty(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{})
	for name, c := range map[string]struct {
		aud    any
		azp    any // nil: no azp claim
		reason string
	}{
		"one audience, no azp":                         {aud: aud},
		"one audience in an array, no azp":             {aud: []string{aud}},
		"one audience, azp ours":                       {aud: aud, azp: aud},
		"several audiences, azp ours":                  {aud: []string{"another-client", aud}, azp: aud},
		"several audiences, no azp":                    {aud: []string{"another-client", aud}, reason: "several audiences and no azp"},
		"several audiences, azp another client":        {aud: []string{aud, "another-client"}, azp: "another-client", reason: "authorized for another party"},
		"one audience, azp another client":             {aud: aud, azp: "another-client", reason: "authorized for another party"},
		"one audience, azp empty":                      {aud: aud, azp: "", reason: "authorized for another party"},
		"one audience, azp ours but in another case":   {aud: aud, azp: strings.ToUpper(aud), reason: "authorized for another party"},
		"one audience, azp a number":                   {aud: aud, azp: 42, reason: "azp (authorized party) claim is not a string"},
		"several audiences, azp an array holding ours": {aud: []string{"another-client", aud}, azp: []string{aud}, reason: "azp (authorized party) claim is not a string"},
	} {
		t.Run(name, func(t *testing.T) {
			claims := map[string]any{"aud": c.aud, "sub": "u1", "email": "u1@example.com", "email_verified": true}
			if c.azp != nil {
				claims["azp"] = c.azp
			}
			id, err := verify(t, v, iss.Mint(t, idtokentest.Token{Claims: claims}))
			if c.reason == "" {
				require.NoError(t, err)
				require.Equal(t, "u1@example.com", id.Email)
				return
			}
			requireRefused(t, err, idtoken.ErrInvalid, c.reason)
			require.NotContains(t, err.Error(), "another-client", "the reason names no token contents")
		})
	}
}

// An access token of the same provider is not an ID token, even when it names the client as
// audience and azp (Keycloak lists the clients whose roles the user holds): an API the app sends
// it to could replay it for the user's private identity. Typed at+jwt (RFC 9068), or with
// Keycloak's typ claim "Bearer", it is refused; Keycloak's ID tokens (typ "ID") stay valid.
func TestVerifyRefusesAccessTokens(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{})
	claims := func(typ any) map[string]any {
		c := map[string]any{"aud": []string{"billing-api", aud}, "azp": aud, "email": "a@example.com", "email_verified": true}
		if typ != nil {
			c["typ"] = typ
		}
		return c
	}
	for name, c := range map[string]struct {
		tok    idtokentest.Token
		reason string
	}{
		"header typ at+jwt":             {idtokentest.Token{Typ: "at+jwt", Claims: claims(nil)}, "typ at+jwt"},
		"header typ application/AT+JWT": {idtokentest.Token{Typ: "application/AT+JWT", Claims: claims(nil)}, "typ at+jwt"},
		"ES256, header typ at+jwt":      {idtokentest.Token{Alg: "ES256", Typ: "at+jwt", Claims: claims(nil)}, "typ at+jwt"},
		"Keycloak's typ claim Bearer":   {idtokentest.Token{Claims: claims("Bearer")}, "typ claim Bearer"},
		"Keycloak's ID token":           {idtokentest.Token{Claims: claims("ID")}, ""},
		"header typ JWT":                {idtokentest.Token{Claims: claims(nil)}, ""},
	} {
		_, err := verify(t, v, iss.Mint(t, c.tok))
		if c.reason == "" {
			require.NoError(t, err, name)
			continue
		}
		requireRefused(t, err, idtoken.ErrInvalid, c.reason)
	}
}

// identity_server.oidc.clock_skew is the leeway on exp; email_claim names the claim read;
// require_email_verified false lets unverified emails through.
func TestVerifyOptions(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	now := time.Now()
	cfg := oidcConfig(iss.URL)
	cfg.ClockSkew = 2 * time.Minute
	v := idtoken.New(cfg, idtoken.Options{})
	expiredAgo := func(d time.Duration) string {
		return iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "a@example.com", "email_verified": true,
			"iat": now.Add(-time.Hour).Unix(), "exp": now.Add(-d).Unix()}})
	}
	_, err := verify(t, v, expiredAgo(time.Minute))
	require.NoError(t, err, "within clock_skew")
	_, err = verify(t, v, expiredAgo(3*time.Minute))
	requireRefused(t, err, idtoken.ErrInvalid, "expired")

	cfg = oidcConfig(iss.URL)
	cfg.EmailClaim, cfg.RequireEmailVerified = "upn", false
	v = idtoken.New(cfg, idtoken.Options{})
	id, err := verify(t, v, iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "upn": "c@example.com", "email_verified": false}}))
	require.NoError(t, err)
	require.Equal(t, "c@example.com", id.Email)

	// email_verified speaks for the email claim only: with another email_claim, that claim is
	// verified only when the email claim names the same address.
	cfg.RequireEmailVerified = true
	v = idtoken.New(cfg, idtoken.Options{})
	upn := func(upn string, more map[string]any) string {
		c := map[string]any{"aud": aud, "upn": upn, "email_verified": true}
		for k, x := range more {
			c[k] = x
		}
		return iss.Mint(t, idtokentest.Token{Claims: c})
	}
	id, err = verify(t, v, upn("C@Example.com", map[string]any{"email": "C@example.COM"}))
	require.NoError(t, err)
	require.Equal(t, "C@Example.com", id.Email)
	_, err = verify(t, v, upn("c@example.com", map[string]any{"email": "other@example.com"}))
	requireRefused(t, err, idtoken.ErrUnverified, "email_verified speaks only for the email claim, which names another address")
	_, err = verify(t, v, upn("c@example.com", nil))
	requireRefused(t, err, idtoken.ErrUnverified, "email_verified speaks only for the email claim, and the token has none")
	_, err = verify(t, v, upn("c", map[string]any{"email": "c"}))
	requireRefused(t, err, idtoken.ErrNoEmail, "upn claim (identity_server.oidc.email_claim) is not a valid address")

	cfg = oidcConfig(iss.URL)
	cfg.Algorithms = []string{"ES256"}
	v = idtoken.New(cfg, idtoken.Options{})
	_, err = verify(t, v, iss.IDToken(t, "RS256", aud, "d@example.com"))
	requireRefused(t, err, idtoken.ErrInvalid, "algorithm not accepted")
	_, err = verify(t, v, iss.IDToken(t, "ES256", aud, "d@example.com"))
	require.NoError(t, err)
}

// nbf and exp at the clock_skew boundaries: a token just minted (nbf = iat = now) is valid
// whatever clock_skew is, exp has clock_skew of leeway, and nbf is judged on the real clock
// with clock_skew, or go-oidc's 5 minutes when that is longer, of leeway (a provider whose
// clock runs ahead). Before, the skew was taken off the clock for nbf too: with a clock_skew
// over 5 minutes, every fresh token carrying nbf was refused as "not valid yet".
func TestVerifyTimeClaimsAtTheSkewBoundaries(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	now := time.Now()
	tok := func(nbf, exp time.Time) string {
		return iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "n@example.com", "email_verified": true,
			"iat": now.Unix(), "nbf": nbf.Unix(), "exp": exp.Unix()}})
	}
	for _, c := range []struct {
		skew     time.Duration
		nbf, exp time.Duration // from now
		reason   string        // "" when accepted
	}{
		{skew: 10 * time.Minute, nbf: 0, exp: 5 * time.Minute},
		{skew: 10 * time.Minute, nbf: 9 * time.Minute, exp: time.Hour},
		{skew: 10 * time.Minute, nbf: 11 * time.Minute, exp: time.Hour, reason: "not valid yet"},
		{skew: 10 * time.Minute, nbf: -time.Hour, exp: -9 * time.Minute},
		{skew: 10 * time.Minute, nbf: -time.Hour, exp: -11 * time.Minute, reason: "expired"},
		{skew: 6 * time.Minute, nbf: 0, exp: 5 * time.Minute},
		{skew: time.Minute, nbf: 0, exp: 5 * time.Minute},
		{skew: time.Minute, nbf: 4 * time.Minute, exp: time.Hour},
		{skew: time.Minute, nbf: 6 * time.Minute, exp: time.Hour, reason: "not valid yet"},
		{skew: time.Minute, nbf: -time.Hour, exp: -30 * time.Second},
		{skew: time.Minute, nbf: -time.Hour, exp: -2 * time.Minute, reason: "expired"},
		{skew: 0, nbf: 0, exp: 5 * time.Minute},
		{skew: 0, nbf: -time.Hour, exp: -30 * time.Second, reason: "expired"},
	} {
		cfg := oidcConfig(iss.URL)
		cfg.ClockSkew = c.skew
		v := idtoken.New(cfg, idtoken.Options{Now: func() time.Time { return now }})
		_, err := verify(t, v, tok(now.Add(c.nbf), now.Add(c.exp)))
		name := fmt.Sprintf("clock_skew %s, nbf %s, exp %s", c.skew, c.nbf, c.exp)
		if c.reason == "" {
			require.NoError(t, err, name)
			continue
		}
		requireRefused(t, err, idtoken.ErrInvalid, c.reason)
	}
}

// An nbf beyond what a time holds is far in the future, not in the past: go-oidc reads 1e300
// (and anything past int64 seconds) as the smallest int64, and time.Unix wraps 9.2e18 into the
// far past, so a token its provider marked as never valid was accepted.
func TestVerifyNbfBeyondTimeIsNotValidYet(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{})
	for _, nbf := range []any{1e300, 1e19, 9.2e18, float64(time.Now().Add(time.Hour).Unix()) + 0.5} {
		_, err := verify(t, v, iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "n@example.com", "email_verified": true, "nbf": nbf}}))
		requireRefused(t, err, idtoken.ErrInvalid, "not valid yet")
	}
	_, err := verify(t, v, iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "n@example.com", "email_verified": true, "nbf": -1e300}}))
	require.NoError(t, err, "an nbf far in the past")
}

// A token issued in the future (iat beyond the clock's leeway, as nbf) is refused; one issued
// within the leeway, or long ago, is not.
func TestVerifyIatInTheFutureIsRefused(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{})
	mint := func(iat any) string {
		return iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "i@example.com", "email_verified": true, "iat": iat}})
	}
	for _, iat := range []any{float64(time.Now().Add(time.Hour).Unix()), 1e300, 9.2e18} {
		_, err := verify(t, v, mint(iat))
		requireRefused(t, err, idtoken.ErrInvalid, "issued in the future")
	}
	for _, iat := range []any{float64(time.Now().Add(time.Minute).Unix()), float64(time.Now().Add(-time.Hour).Unix()), 0} {
		_, err := verify(t, v, mint(iat))
		require.NoError(t, err, "iat %v", iat)
	}
}

// A rotated key works without a restart: the first token under the new kid refetches the set;
// a key dropped from the set stops working once the set is refetched.
func TestVerifyRotatedKey(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	clock := newClock()
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{Now: clock.Now})
	old := iss.IDToken(t, "RS256", aud, "r@example.com")
	_, err := verify(t, v, old)
	require.NoError(t, err)

	iss.Rotate(t, "RS256", false)
	_, err = verify(t, v, iss.IDToken(t, "RS256", aud, "r@example.com"))
	require.NoError(t, err, "the new key is fetched on its first token")
	jwks, _ := iss.Fetches(t)
	require.Equal(t, 2, jwks)
	_, err = verify(t, v, old)
	requireRefused(t, err, idtoken.ErrInvalid, "does not publish")

	// A token without kid: any key of the set may verify it; after a rotation, no cached key
	// does, and the set is fetched again (within the refetch rule).
	noKid := func() string {
		return iss.Mint(t, idtokentest.Token{Kid: "-", Claims: map[string]any{"aud": aud, "email": "r@example.com", "email_verified": true}})
	}
	_, err = verify(t, v, noKid())
	require.NoError(t, err, "a token without kid")
	clock.Add(11 * time.Second)
	iss.Rotate(t, "RS256", false)
	_, err = verify(t, v, noKid())
	require.NoError(t, err, "a token without kid under a rotated key")
	jwks, _ = iss.Fetches(t)
	require.Equal(t, 3, jwks)

	// ES256 rotates the same way, once the refetch interval has passed.
	clock.Add(11 * time.Second)
	iss.Rotate(t, "ES256", true)
	_, err = verify(t, v, iss.IDToken(t, "ES256", aud, "r@example.com"))
	require.NoError(t, err)
	jwks, discovery := iss.Fetches(t)
	require.Equal(t, 4, jwks)
	require.Equal(t, 1, discovery, "discovery is read once")
}

// The kid flood: tokens with random kids cost the provider at most one refetch per 10 s.
func TestVerifyKidFlood(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	clock := newClock()
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{Now: clock.Now})
	_, err := verify(t, v, iss.IDToken(t, "RS256", aud, "f@example.com"))
	require.NoError(t, err)
	tokens := make([]string, 40)
	for i := range tokens {
		tokens[i] = iss.Mint(t, idtokentest.Token{Kid: randomKid(), Claims: map[string]any{"aud": aud, "email": "f@example.com", "email_verified": true}})
	}
	var wg sync.WaitGroup
	var refused atomic.Int64
	for _, tok := range tokens {
		wg.Go(func() {
			if _, err := verify(t, v, tok); errors.Is(err, idtoken.ErrInvalid) {
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(40), refused.Load())
	jwks, _ := iss.Fetches(t)
	require.LessOrEqual(t, jwks, 3, "40 random kids")
	require.Equal(t, 2, jwks, "the first fetch and one refetch")

	// 10 s later, one more refetch is allowed; not before.
	clock.Add(9 * time.Second)
	_, err = verify(t, v, tokens[0])
	require.ErrorIs(t, err, idtoken.ErrInvalid)
	jwks, _ = iss.Fetches(t)
	require.Equal(t, 2, jwks)
	clock.Add(2 * time.Second)
	for _, tok := range tokens[:10] {
		_, err = verify(t, v, tok)
		require.ErrorIs(t, err, idtoken.ErrInvalid)
	}
	jwks, _ = iss.Fetches(t)
	require.Equal(t, 3, jwks)
}

// The provider down: tokens are ErrUnavailable (never invalid), quickly while the failure is
// fresh; once it is up, tokens work without a restart; once the keys are cached, its outage
// does not matter for known keys.
func TestVerifyProviderDown(t *testing.T) {
	t.Parallel()
	port, release := apptest.DeadPort(t)
	clock := newClock()
	cfg := oidcConfig("http://127.0.0.1:" + itoa(port))
	v := idtoken.New(cfg, idtoken.Options{Now: clock.Now, Client: &http.Client{Timeout: 5 * time.Second}})
	_, err := verify(t, v, "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJhdWQiOiJ4In0.c2ln")
	requireRefused(t, err, idtoken.ErrUnavailable, "cannot be fetched")
	var r *idtoken.Refusal
	require.ErrorAs(t, err, &r)
	require.Contains(t, r.Cause.Error(), "discovery")

	release()
	iss := idtokentest.Start(t, port)
	tok := iss.Mint(t, idtokentest.Token{Claims: map[string]any{"aud": aud, "email": "d@example.com", "email_verified": true,
		"exp": time.Now().Add(3 * time.Hour).Unix()}})
	_, err = verify(t, v, tok)
	require.ErrorIs(t, err, idtoken.ErrUnavailable, "within 2 s of the failure, the provider is not asked")
	jwks, discovery := iss.Fetches(t)
	require.Zero(t, jwks+discovery)
	clock.Add(3 * time.Second)
	_, err = verify(t, v, tok)
	require.NoError(t, err)

	iss.Stop()
	_, err = verify(t, v, tok)
	require.NoError(t, err, "cached keys serve while the provider is down")
	clock.Add(2 * time.Hour)
	_, err = verify(t, v, tok)
	require.NoError(t, err, "a set past its age is kept while the provider cannot be reached")
}

// newClock stands still at the time the test started (tokens are minted on the real time,
// valid for minutes) and moves only by Add, so the fetch timings do not depend on how fast
// the machine runs the test.
func newClock() *fakeclock.Clock { return fakeclock.At(time.Now()) }

func randomKid() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func itoa(i int) string { return strconv.Itoa(i) }

// Discovery must name the configured issuer, and its jwks_uri (and any redirect) must be https
// or loopback http: otherwise the keys could be forged on the network. Both are
// ErrUnavailable (a provider problem, not the client's), with the cause for the log.
func TestVerifyDiscoveryRules(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		doc   func(base string) map[string]string
		cause string
	}{
		"another issuer": {func(base string) map[string]string {
			return map[string]string{"issuer": "https://other.example.com", "jwks_uri": base + "/jwks"}
		}, "calls itself"},
		"http jwks_uri off loopback": {func(string) map[string]string {
			return map[string]string{"issuer": "", "jwks_uri": "http://keys.example.com/jwks"}
		}, "want https://"},
		"no jwks_uri": {func(string) map[string]string { return map[string]string{"issuer": ""} }, "not a URL"},
		"redirect to http off loopback": {func(base string) map[string]string {
			return map[string]string{"issuer": "", "jwks_uri": base + "/moved"}
		}, "want https://"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var base string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.Path {
				case "/.well-known/openid-configuration":
					doc := c.doc(base)
					if doc["issuer"] == "" {
						doc["issuer"] = base
					}
					_ = json.NewEncoder(w).Encode(doc)
				case "/moved":
					http.Redirect(w, r, "http://keys.example.com/jwks", http.StatusFound)
				default:
					http.NotFound(w, r)
				}
			}))
			t.Cleanup(srv.Close)
			base = srv.URL
			v := idtoken.New(oidcConfig(base), idtoken.Options{})
			_, err := verify(t, v, "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJhdWQiOiJ4In0.c2ln")
			requireRefused(t, err, idtoken.ErrUnavailable, "cannot be fetched")
			var r *idtoken.Refusal
			require.ErrorAs(t, err, &r)
			require.Contains(t, r.Cause.Error(), c.cause)
		})
	}
}

// A provider off this machine cannot point idvault at a service on it: a jwks_uri on a loopback
// host is refused (the default client also refuses to connect to one, whatever the name:
// transport_internal_test.go). The provider, https://idp.example.com, is a TLS server on
// loopback that the client reaches under that name.
func TestVerifyRemoteIssuerKeysNotOnThisMachine(t *testing.T) {
	t.Parallel()
	const issuer = "https://idp.example.com"
	var jwksURI string
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]string{"issuer": issuer, "jwks_uri": jwksURI})
	}))
	t.Cleanup(srv.Close)
	client := srv.Client()
	tr := client.Transport.(*http.Transport)
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	for _, uri := range []string{srv.URL + "/jwks", "https://localhost" + port + "/jwks", "http://[::1]" + port + "/jwks"} {
		jwksURI = uri
		v := idtoken.New(oidcConfig(issuer), idtoken.Options{Client: client})
		_, err := verify(t, v, "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJhdWQiOiJ4In0.c2ln")
		requireRefused(t, err, idtoken.ErrUnavailable, "cannot be fetched")
		var r *idtoken.Refusal
		require.ErrorAs(t, err, &r)
		require.Contains(t, r.Cause.Error(), "is on this machine, and the issuer is not", uri)
	}
}
