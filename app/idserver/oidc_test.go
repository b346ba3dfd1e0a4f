package idserver_test

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/idservertest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
	"github.com/idvault/idvault/app/server"
)

// The app token and the OIDC audience are package idservertest's, which app/e2e shares.
const (
	appToken = idservertest.AppToken
	audience = idservertest.Audience
)

// withOIDC turns identity_server.oidc on for issuer, with the app token set (OIDC ends the
// tokenless mode) and the given browser origins.
func withOIDC(issuer string, origins ...string) func(*config.IdentityServer) {
	return func(c *config.IdentityServer) {
		c.Token = appToken
		c.OIDC = config.DefaultIdentityServer().OIDC
		c.OIDC.Issuer, c.OIDC.Audience = issuer, audience
		c.CORSOrigins = origins
	}
}

// deadIssuer is an issuer URL on a loopback port where connections are refused for the test's
// length.
func deadIssuer(t *testing.T) string {
	port, _ := apptest.DeadPort(t)
	return "http://127.0.0.1:" + strconv.Itoa(port)
}

// conformanceModes are the ways a backend or a client authenticates; the conformance tests
// (the state machine, normalisation, errors) run in each: tokenless without OIDC, the app token
// with OIDC on (its provider down: the app token never needs it), and, with idTokens, each
// request carrying an ID token of its own email from a real provider.
func conformanceModes(t *testing.T, idTokens bool) map[string]func(t *testing.T) *fixture {
	modes := map[string]func(t *testing.T) *fixture{
		"no OIDC":            func(t *testing.T) *fixture { return newFixture(t) },
		"OIDC on, app token": func(t *testing.T) *fixture { return newFixture(t, withOIDC(deadIssuer(t))) },
	}
	if idTokens {
		iss := idtokentest.Start(t, 0)
		modes["OIDC on, ID token"] = func(t *testing.T) *fixture {
			f := newFixture(t, withOIDC(iss.URL))
			f.bearer = func(t *testing.T, email string) string { return iss.IDToken(t, "ES256", audience, email) }
			return f
		}
	}
	return modes
}

// idRequest sends a request with an ID token (and extra headers).
func idRequest(t *testing.T, f *fixture, method, path, email, token string, hdr ...string) apptest.Response {
	t.Helper()
	return apptest.Do(t, f.http, method, path, map[string]any{"email": email}, append([]string{"Authorization", "Bearer " + token}, hdr...)...)
}

func idTokenCount(t *testing.T, f *fixture, result string) int {
	t.Helper()
	return counter(t, f, "idvault_identity_server_id_tokens_total", result)
}

// counter reads the value of a counter with one label.
func counter(t *testing.T, f *fixture, name, label string) int {
	t.Helper()
	mfs, err := f.env.Prom.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if m.GetLabel()[0].GetValue() == label {
				return int(m.GetCounter().GetValue())
			}
		}
	}
	t.Fatalf("no %s{%q}", name, label)
	return 0
}

// With OIDC on, both counters exist at 0 for every result before the first ID token, as every
// labelled counter of /metrics does, so a rate or an alert on fetch failures works from the start.
func TestIDTokenCountersExistAtZero(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withOIDC(deadIssuer(t)))
	for _, r := range []string{"ok", "invalid", "forbidden", "unverified", "provider_unavailable"} {
		require.Zero(t, counter(t, f, "idvault_identity_server_id_tokens_total", r), r)
	}
	for _, r := range []string{"ok", "failed"} {
		require.Zero(t, counter(t, f, "idvault_identity_server_oidc_key_fetches_total", r), r)
	}
}

// A client fetches, registers and shares with its own ID token: its own email only for
// /identity (after normalisation), any email for /public_identity; the record is the one the
// backend gets with the app token.
func TestIDTokenServesItsOwnEmail(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	f := newFixture(t, withOIDC(iss.URL))
	t.Cleanup(func() { f.requireNothingSecretLogged(t) })
	for _, alg := range []string{"RS256", "ES256"} {
		t.Run(alg, func(t *testing.T) {
			email := "Carol-" + alg + "@Example.com"
			tok := iss.IDToken(t, alg, audience, email)
			f.keep(tok)
			resp := idRequest(t, f, http.MethodPost, "/identity", "  Carol-"+alg+"@EXAMPLE.COM ", tok)
			require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
			var r record
			resp.JSON(t, &r)
			f.keep(r.ServiceIdentity)
			require.Equal(t, r.ServiceIdentity, r.TankerIdentity)
			require.Equal(t, r, f.identity(t, email), "the same record as the backend's, by the app token")

			resp = idRequest(t, f, http.MethodPatch, "/identity", email, tok)
			require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
			require.True(t, f.identity(t, email).Registered)

			resp = idRequest(t, f, http.MethodPost, "/public_identity", "dave@example.com", tok)
			require.Equal(t, http.StatusOK, resp.Status, "any email's public identity: %s", resp.Body)
			require.Equal(t, f.publicIdentity(t, "dave@example.com"), resp.Map(t)["publicIdentity"])

			for name, other := range map[string]string{
				"another user":              "dave@example.com",
				"the local part's case":     strings.ToLower(email), // local parts are case-sensitive
				"another user, same domain": "mallory@example.com",
			} {
				for _, method := range []string{http.MethodPost, http.MethodPatch} {
					resp := idRequest(t, f, method, "/identity", other, tok)
					requireError(t, resp, apierr.Forbidden, "forbidden: the ID token is for another email")
					require.NotContains(t, string(resp.Body), "Identity", name)
				}
			}
		})
	}
	n, err := f.env.Store.CountRecords(f.app.ID)
	require.NoError(t, err)
	require.Equal(t, 3, n, "Carol twice and dave: no record for a refused request")
	require.Equal(t, 12, idTokenCount(t, f, "forbidden"))
	require.Equal(t, 6, idTokenCount(t, f, "ok"))
	logs := f.env.LogBuf.String()
	require.Contains(t, logs, "id token refused for another email")
	for _, clear := range []string{"Carol", "carol", "dave@", "mallory", "sub-"} {
		require.NotContains(t, logs, clear, "neither subject nor email in the log")
	}
}

// A token for a look-alike domain is another email. Go lower-cases the dotted capital I to an
// ASCII "i" and "ẞ" to "ß", but mail to "İbm.example" goes to the IDNA domain i̇bm.example
// (xn--ibm-8dc) and mail to "STRAẞE.example" to strasse.example: other domains, which someone
// else may own. Before, a provider's token for victim@İbm.example normalised to
// victim@ibm.example and got that user's identity.
func TestIDTokenLookalikeDomainIsAnotherEmail(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	f := newFixture(t, withOIDC(iss.URL))
	for lookalike, victimEmail := range map[string]string{
		"victim@\u0130bm.example":    "victim@ibm.example",
		"victim@STRA\u1E9EE.example": "victim@stra\u00dfe.example",
	} {
		victim := f.identity(t, victimEmail)
		f.keep(victim.ServiceIdentity)
		tok := iss.IDToken(t, "RS256", audience, lookalike)
		f.keep(tok)
		for _, method := range []string{http.MethodPost, http.MethodPatch} {
			resp := idRequest(t, f, method, "/identity", victimEmail, tok)
			requireError(t, resp, apierr.Forbidden, "forbidden: the ID token is for another email")
		}
		resp := idRequest(t, f, http.MethodPost, "/identity", lookalike, tok)
		require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
		var own record
		resp.JSON(t, &own)
		f.keep(own.ServiceIdentity)
		require.NotEqual(t, victim.ServiceIdentity, own.ServiceIdentity, "its own identity, not the victim's")
		require.False(t, f.identity(t, victimEmail).Registered)
	}
}

// Every refusal of item 3 through HTTP: 401 with WWW-Authenticate: Bearer error="invalid_token"
// and the identity server's JSON body; unverified or no email: 403 saying which; nothing
// stored; the token, the subject and the email never logged.
func TestIDTokenRefusals(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	f := newFixture(t, withOIDC(iss.URL))
	const email = "victim@example.com"
	claims := func(more map[string]any) map[string]any {
		c := map[string]any{"aud": audience, "sub": "subject-42", "email": email, "email_verified": true}
		for k, v := range more {
			c[k] = v
		}
		return c
	}
	now := time.Now()
	for name, c := range map[string]struct {
		token   idtokentest.Token
		raw     string
		code    apierr.Code
		message string
		result  string
	}{
		"expired":        {token: idtokentest.Token{Claims: claims(map[string]any{"exp": now.Add(-5 * time.Minute).Unix(), "iat": now.Add(-time.Hour).Unix()})}, code: apierr.InvalidToken, message: "invalid ID token: expired"},
		"wrong audience": {token: idtokentest.Token{Claims: claims(map[string]any{"aud": "another-client"})}, code: apierr.InvalidToken, message: "invalid ID token: minted for another audience"},
		"azp another client": {token: idtokentest.Token{Claims: claims(map[string]any{"azp": "another-client"})}, code: apierr.InvalidToken,
			message: "invalid ID token: authorized for another party (azp is not identity_server.oidc.audience)"},
		"several audiences, no azp": {token: idtokentest.Token{Claims: claims(map[string]any{"aud": []string{"another-client", audience}})}, code: apierr.InvalidToken,
			message: "invalid ID token: minted for several audiences and no azp (authorized party) claim"},
		"wrong issuer": {token: idtokentest.Token{Claims: claims(map[string]any{"iss": "https://accounts.example.com"})}, code: apierr.InvalidToken, message: "invalid ID token: issued by another issuer"},
		"alg none":     {token: idtokentest.Token{Claims: claims(nil), Sign: "none"}, code: apierr.InvalidToken, message: "invalid ID token: malformed, or signed with an algorithm not accepted (identity_server.oidc.algorithms)"},
		"HS256 keyed with the public key": {token: idtokentest.Token{Claims: claims(nil), Sign: "hs256-public"}, code: apierr.InvalidToken,
			message: "invalid ID token: malformed, or signed with an algorithm not accepted (identity_server.oidc.algorithms)"},
		"unknown key under a known kid": {token: idtokentest.Token{Claims: claims(nil), Sign: "foreign"}, code: apierr.InvalidToken, message: "invalid ID token: bad signature"},
		"garbage":                       {raw: "not-a-jwt", code: apierr.InvalidToken, message: "invalid ID token: malformed, or signed with an algorithm not accepted (identity_server.oidc.algorithms)"},
		"email_verified false": {token: idtokentest.Token{Claims: claims(map[string]any{"email_verified": false})}, code: apierr.EmailNotVerified,
			message: "the ID token's email is not verified (email_verified is not true)", result: "unverified"},
		"no email claim": {token: idtokentest.Token{Claims: claims(map[string]any{"email": nil})}, code: apierr.NoEmailClaim,
			message: "the ID token has no email claim (identity_server.oidc.email_claim)", result: "unverified"},
		"email claim not an address": {token: idtokentest.Token{Claims: claims(map[string]any{"email": "not an address"})}, code: apierr.NoEmailClaim,
			message: "the ID token's email claim is not a valid address", result: "unverified"},
	} {
		t.Run(name, func(t *testing.T) {
			raw := c.raw
			if raw == "" {
				raw = iss.Mint(t, c.token)
			}
			f.keep(raw, "subject-42")
			for _, r := range []struct{ method, path string }{
				{http.MethodPost, "/identity"}, {http.MethodPatch, "/identity"}, {http.MethodPost, "/public_identity"},
			} {
				resp := idRequest(t, f, r.method, r.path, email, raw)
				requireError(t, resp, c.code, c.message)
				if c.code == apierr.InvalidToken {
					require.Contains(t, resp.Header.Get("WWW-Authenticate"), `Bearer realm="idvault identity server", error="invalid_token"`)
				} else {
					require.Empty(t, resp.Header.Get("WWW-Authenticate"))
				}
			}
		})
	}
	n, err := f.env.Store.CountRecords(f.app.ID)
	require.NoError(t, err)
	require.Zero(t, n, "no refused request stored anything")
	require.Equal(t, 9*3, idTokenCount(t, f, "invalid"))
	require.Equal(t, 3*3, idTokenCount(t, f, "unverified"))
	logs := f.env.LogBuf.String()
	require.NotContains(t, logs, email)
	require.NotContains(t, logs, "subject-42")
	f.requireNothingSecretLogged(t)

	// No credential at all: OIDC on ends the tokenless mode.
	resp := apptest.Do(t, f.http, http.MethodPost, "/identity", map[string]any{"email": email})
	requireError(t, resp, apierr.Unauthorized, "unauthorized")
	require.Equal(t, `Bearer realm="idvault identity server"`, resp.Header.Get("WWW-Authenticate"))
}

// The kid flood through HTTP: 40 tokens with random kids, 401 each, cost the provider at most
// 3 fetches of its key set. A rotated key then works without a restart.
func TestIDTokenKidFloodAndRotation(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	f := newFixture(t, withOIDC(iss.URL))
	resp := idRequest(t, f, http.MethodPost, "/public_identity", "k@example.com", iss.IDToken(t, "RS256", audience, "k@example.com"))
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	var wg sync.WaitGroup
	statuses := make([]int, 40)
	tokens := make([]string, 40)
	for i := range tokens {
		kid := make([]byte, 8)
		_, _ = rand.Read(kid)
		tokens[i] = iss.Mint(t, idtokentest.Token{Kid: hex.EncodeToString(kid), Claims: map[string]any{"aud": audience, "email": "k@example.com", "email_verified": true}})
	}
	for i, tok := range tokens {
		wg.Go(func() {
			statuses[i] = idRequest(t, f, http.MethodPost, "/public_identity", "k@example.com", tok).Status
		})
	}
	wg.Wait()
	for i, s := range statuses {
		require.Equal(t, http.StatusUnauthorized, s, "token %d", i)
	}
	jwks, _ := iss.Fetches(t)
	require.LessOrEqual(t, jwks, 3, "JWKS fetches for 40 random kids")
	require.Equal(t, jwks, counter(t, f, "idvault_identity_server_oidc_key_fetches_total", "ok"), "the fetch metric counts them")
	t.Logf("key set fetches: %d (the first one and at most one refetch per 10 s)", jwks)

	// Rotation, on a server whose one refetch of the interval was not spent on a flood: the
	// first token under the new key fetches the set again, and works.
	g := newFixture(t, withOIDC(iss.URL))
	require.Equal(t, http.StatusOK, idRequest(t, g, http.MethodPost, "/public_identity", "k@example.com", iss.IDToken(t, "ES256", audience, "k@example.com")).Status)
	iss.Rotate(t, "ES256", false)
	resp = idRequest(t, g, http.MethodPost, "/identity", "k@example.com", iss.IDToken(t, "ES256", audience, "k@example.com"))
	require.Equal(t, http.StatusOK, resp.Status, "the rotated key, without a restart: %s", resp.Body)
	f.keep(resp.Map(t)["serviceIdentity"].(string))
	g.keep(resp.Map(t)["serviceIdentity"].(string))
}

// The provider unreachable: an ID token gets 503 identity_provider_unavailable with
// Retry-After (never a 500, never a 401), the app token keeps working, and the cause is logged.
func TestIDTokenProviderUnavailable(t *testing.T) {
	t.Parallel()
	f := newFixture(t, withOIDC(deadIssuer(t)))
	tok := "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiSldUIn0.eyJhdWQiOiJ4In0.c2lnbmF0dXJl"
	for _, r := range []struct{ method, path string }{
		{http.MethodPost, "/identity"}, {http.MethodPatch, "/identity"}, {http.MethodPost, "/public_identity"},
	} {
		resp := idRequest(t, f, r.method, r.path, "u@example.com", tok)
		requireError(t, resp, apierr.IdentityProviderUnavailable, "the identity provider cannot be reached to check the ID token; retry later")
		// The provider is asked again 2 s after a failed fetch: the client is told to wait that.
		require.Contains(t, []string{"1", "2"}, resp.Header.Get("Retry-After"), "%s %s", r.method, r.path)
	}
	require.Equal(t, 3, idTokenCount(t, f, "provider_unavailable"))
	failed := counter(t, f, "idvault_identity_server_oidc_key_fetches_total", "failed")
	require.True(t, failed >= 1 && failed <= 3, "failed fetches counted: %d", failed)
	r := f.identity(t, "u@example.com")
	require.Equal(t, r, f.identity(t, "u@example.com"), "the app token works while the provider is down")
	require.Contains(t, f.env.LogBuf.String(), "identity_provider_unavailable")
	require.Contains(t, f.env.LogBuf.String(), "discovery")
}

// CORS: a listed origin's preflight is answered 204 with the grant; its answers (errors too)
// carry Access-Control-Allow-Origin; another origin gets no grant, and the refusal is logged
// with the origin; answers vary on Origin.
func TestCORS(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	const allowed, other = "https://app.example.com", "https://evil.example.com"
	f := newFixture(t, withOIDC(iss.URL, allowed, "http://localhost:3000"))
	preflight := func(path, origin, method string) apptest.Response {
		return apptest.Do(t, f.http, http.MethodOptions, path, nil, "Origin", origin,
			"Access-Control-Request-Method", method, "Access-Control-Request-Headers", "authorization,content-type")
	}
	// The paths as the router matches them: in any case, with or without a trailing slash.
	for path, methods := range map[string]string{"/identity": "POST, PATCH", "/public_identity": "POST",
		"/Identity/": "POST, PATCH", "/PUBLIC_IDENTITY": "POST", "/Public_Identity/": "POST"} {
		resp := preflight(path, allowed, http.MethodPost)
		require.Equal(t, http.StatusNoContent, resp.Status, "body: %s", resp.Body)
		require.Equal(t, allowed, resp.Header.Get("Access-Control-Allow-Origin"))
		require.Equal(t, methods, resp.Header.Get("Access-Control-Allow-Methods"))
		require.Equal(t, "Authorization, Content-Type", resp.Header.Get("Access-Control-Allow-Headers"))
		require.Contains(t, varies(resp), "Origin")
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Credentials"), "no cookies: the ID token is the credential")

		for _, o := range []string{other, "https://app.example.com.evil.example", "null", "HTTPS://APP.EXAMPLE.COM"} {
			resp = preflight(path, o, http.MethodPost)
			require.NotEqual(t, http.StatusNoContent, resp.Status, o)
			require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), o)
			require.Empty(t, resp.Header.Get("Access-Control-Allow-Headers"), o)
		}
	}
	tok := iss.IDToken(t, "RS256", audience, "cors@example.com")
	resp := idRequest(t, f, http.MethodPost, "/identity", "cors@example.com", tok, "Origin", allowed)
	require.Equal(t, http.StatusOK, resp.Status)
	f.keep(resp.Map(t)["serviceIdentity"].(string))
	require.Equal(t, allowed, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "WWW-Authenticate")
	require.Contains(t, varies(resp), "Origin")
	resp = idRequest(t, f, http.MethodPost, "/identity", "cors@example.com", "garbage", "Origin", allowed)
	require.Equal(t, http.StatusUnauthorized, resp.Status)
	require.Equal(t, allowed, resp.Header.Get("Access-Control-Allow-Origin"), "the page can read the error")
	resp = idRequest(t, f, http.MethodPost, "/identity", "cors@example.com", tok, "Origin", other)
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))

	// Each refusal is logged with its origin, never with the token: a 405 preflight in the
	// request log is a refused origin, not a routing bug.
	logs := f.env.LogBuf.String()
	require.Contains(t, logs, `msg="cors: origin not in identity_server.cors_origins, no grant" origin=https://evil.example.com preflight=true route=/identity`)
	require.Contains(t, logs, `origin=https://evil.example.com preflight=false route=/identity`)
	require.Contains(t, logs, `origin=null preflight=true`)
	require.NotContains(t, logs, "origin=https://app.example.com ", "a listed origin is not a refusal")
	require.NotContains(t, logs, tok)

	// Other routes get no grant; without cors_origins nothing is granted.
	for _, path := range []string{"/healthz", "/identities", "/IDENTITY/x", "/public_identity//"} {
		resp = apptest.Do(t, f.http, http.MethodOptions, path, nil, "Origin", allowed, "Access-Control-Request-Method", "GET")
		require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), path)
	}
	g := newFixture(t, withOIDC(iss.URL))
	resp = apptest.Do(t, g.http, http.MethodOptions, "/identity", nil, "Origin", allowed, "Access-Control-Request-Method", "POST")
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	require.Equal(t, http.StatusMethodNotAllowed, resp.Status)
}

// Errors answered before any route ran carry the grant too, so a page reads them instead of
// a network failure: a body over server.body_limit (413, refused as it is read), a
// Content-Encoding that does not decode (400, refused by the front middleware).
func TestCORSGrantOnErrorsBeforeRouting(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	const allowed, other = "https://app.example.com", "https://evil.example.com"
	f := newFixture(t, withOIDC(iss.URL, allowed))
	tok := iss.IDToken(t, "RS256", audience, "cors@example.com")
	big := `{"email":"cors@example.com","pad":"` + strings.Repeat("a", 2<<20) + `"}`
	for name, c := range map[string]struct {
		path, body string
		hdr        []string
		status     int
	}{
		"body over the limit":          {"/identity", big, nil, http.StatusRequestEntityTooLarge},
		"body over the limit, /Public": {"/Public_Identity/", big, nil, http.StatusRequestEntityTooLarge},
		"undecodable body":             {"/public_identity", `{"email":"cors@example.com"}`, []string{"Content-Encoding", "gzip"}, http.StatusBadRequest},
	} {
		for _, origin := range []string{allowed, other} {
			hdr := append([]string{"Authorization", "Bearer " + tok, "Origin", origin}, c.hdr...)
			resp := apptest.Do(t, f.http, http.MethodPost, c.path, c.body, hdr...)
			require.Equal(t, c.status, resp.Status, "%s: %s", name, resp.Body)
			require.Contains(t, resp.Map(t), "error", name)
			require.Contains(t, varies(resp), "Origin", name)
			if origin == other {
				require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"), name)
				continue
			}
			require.Equal(t, allowed, resp.Header.Get("Access-Control-Allow-Origin"), "%s: the page can read the error", name)
			require.Contains(t, resp.Header.Get("Access-Control-Expose-Headers"), "X-Request-ID", name)
		}
	}
	// Other paths get no grant.
	resp := apptest.Do(t, f.http, http.MethodPost, "/verification/email", big, "Origin", allowed)
	require.Equal(t, http.StatusRequestEntityTooLarge, resp.Status)
	require.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
}

// The metrics of ID-token outcomes exist from the start when OIDC is on, and not otherwise.
func TestIDTokenMetricsOnlyWithOIDC(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	a := env.CreateApp(t, false).App
	cfg := config.IdentityServer{Enabled: true}
	withOIDC(deadIssuer(t))(&cfg)
	env.Server(func(d *server.Deps) {
		d.IdentityServer = idserver.New(a.ID, env.Apps, env.Dir, cfg, env.Prom, env.Log)
	})
	require.Equal(t, 5, series(t, env, "idvault_identity_server_id_tokens_total"))
	plain := apptest.New(t)
	plain.Server(func(d *server.Deps) {
		d.IdentityServer = idserver.New(a.ID, plain.Apps, plain.Dir, config.IdentityServer{Enabled: true}, plain.Prom, plain.Log)
	})
	require.Zero(t, series(t, plain, "idvault_identity_server_id_tokens_total"))
}

// series counts the series of a metric.
func series(t *testing.T, env *apptest.Env, name string) int {
	t.Helper()
	mfs, err := env.Prom.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}

// varies lists the header names of an answer's Vary headers.
func varies(resp apptest.Response) []string {
	var names []string
	for _, v := range resp.Header.Values("Vary") {
		for _, n := range strings.Split(v, ",") {
			names = append(names, strings.TrimSpace(n))
		}
	}
	return names
}

// An ID token that its provider filled with groups or roles (12 KB here) reaches the identity
// server when OIDC is on: here refused as malformed, 401 with the CORS grant a page can read,
// not a 431 before routing, which carries none (server.ReadBufferSize: 8 KiB more with OIDC on).
func TestLargeIDTokenReachesTheIdentityServer(t *testing.T) {
	t.Parallel()
	const origin = "http://localhost:3000"
	headers := []string{"Authorization", "Bearer " + strings.Repeat("x", 12<<10), "Origin", origin}
	body := map[string]any{"email": "big@example.com"}

	on := newFixture(t, withOIDC(deadIssuer(t), origin))
	resp := apptest.Do(t, on.http, http.MethodPost, "/identity", body, headers...)
	require.Equal(t, http.StatusUnauthorized, resp.Status, "%s", resp.Body)
	require.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
}
