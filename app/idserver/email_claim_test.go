package idserver_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
)

// email_verified speaks only for the email claim. With identity_server.oidc.email_claim set to
// another claim (preferred_username, which some providers let users change to any address),
// the token's email is verified only when email_verified is true and the email claim names the
// same address after normalisation; else 403 email_not_verified saying why. Before, a user who
// verified attacker@evil.example and set preferred_username to victim@example.com got the
// victim's identity.
func TestIDTokenOtherEmailClaimNeedsTheVerifiedEmail(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	f := newFixture(t, withOIDC(iss.URL), func(c *config.IdentityServer) { c.OIDC.EmailClaim = "preferred_username" })
	const victim = "victim@example.com"
	other := "the ID token's preferred_username claim is not verified: email_verified speaks only for the email claim, which names another address"
	for name, c := range map[string]struct {
		claims  map[string]any
		message string // "" when accepted
	}{
		"the verified email is another address": {claims: map[string]any{"email": "attacker@evil.example", "email_verified": true}, message: other},
		"no email claim": {claims: map[string]any{"email_verified": true},
			message: "the ID token's preferred_username claim is not verified: email_verified speaks only for the email claim, and the token has none"},
		"the email claim is not an address": {claims: map[string]any{"email": "victim", "email_verified": true},
			message: "the ID token's preferred_username claim is not verified: email_verified speaks only for the email claim, which is not a valid address"},
		"the local part's case differs": {claims: map[string]any{"email": "Victim@example.com", "email_verified": true}, message: other},
		"email not verified": {claims: map[string]any{"email": victim, "email_verified": false},
			message: "the ID token's email is not verified (email_verified is not true)"},
		"the same address":                {claims: map[string]any{"email": victim, "email_verified": true}},
		"the same address, domain's case": {claims: map[string]any{"email": "victim@EXAMPLE.com", "email_verified": "true"}},
	} {
		t.Run(name, func(t *testing.T) {
			claims := map[string]any{"aud": audience, "sub": "subject-7", "preferred_username": victim}
			for k, v := range c.claims {
				claims[k] = v
			}
			tok := iss.Mint(t, idtokentest.Token{Claims: claims})
			f.keep(tok, "subject-7")
			resp := idRequest(t, f, http.MethodPost, "/identity", victim, tok)
			if c.message == "" {
				require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
				var r record
				resp.JSON(t, &r)
				f.keep(r.ServiceIdentity)
				return
			}
			requireError(t, resp, apierr.EmailNotVerified, c.message)
		})
	}
	require.Equal(t, 5, idTokenCount(t, f, "unverified"))
	require.NotContains(t, f.env.LogBuf.String(), "attacker@")
}

// An email claim with white space or control characters around the address is not that
// address: 401 invalid_token, and the record of the address it looks like is not handed out
// (it used to be trimmed and matched to it). A time claim written as a string is refused the
// same way.
func TestIDTokenClaimsThatAreNotWhatTheyLookLike(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	f := newFixture(t, withOIDC(iss.URL))
	const victim = "victim@example.com"
	f.keep(f.identity(t, victim).ServiceIdentity)
	for name, c := range map[string]struct {
		claims  map[string]any
		message string
	}{
		"email led by a space":  {map[string]any{"email": " " + victim}, "invalid ID token: the email claim has white space or control characters around the address"},
		"email ended by a tab":  {map[string]any{"email": victim + "\t"}, "invalid ID token: the email claim has white space or control characters around the address"},
		"email led by U+00A0":   {map[string]any{"email": "\u00a0" + victim}, "invalid ID token: the email claim has white space or control characters around the address"},
		"email ended by U+3000": {map[string]any{"email": victim + "\u3000"}, "invalid ID token: the email claim has white space or control characters around the address"},
		"nbf a string":          {map[string]any{"email": victim, "nbf": "1767225600"}, "invalid ID token: the nbf claim is not a number (seconds since 1970, RFC 7519 NumericDate)"},
		"iat a string":          {map[string]any{"email": victim, "iat": "1767225600"}, "invalid ID token: the iat claim is not a number (seconds since 1970, RFC 7519 NumericDate)"},
	} {
		t.Run(name, func(t *testing.T) {
			claims := map[string]any{"aud": audience, "sub": "subject-8", "email_verified": true}
			for k, v := range c.claims {
				claims[k] = v
			}
			tok := iss.Mint(t, idtokentest.Token{Claims: claims})
			f.keep(tok, "subject-8")
			for _, method := range []string{http.MethodPost, http.MethodPatch} {
				resp := idRequest(t, f, method, "/identity", victim, tok)
				requireError(t, resp, apierr.InvalidToken, c.message)
				require.Contains(t, resp.Header.Get("WWW-Authenticate"), `error="invalid_token"`)
			}
		})
	}
	require.False(t, f.identity(t, victim).Registered, "no PATCH reached the victim's record")
}
