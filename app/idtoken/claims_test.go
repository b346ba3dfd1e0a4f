package idtoken_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/idtoken"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
)

// Claims that are not what they look like are refused as invalid, from a real provider: a time
// claim written as a string (go-oidc reads a string exp as its number, and a string nbf or iat
// was ignored while its number form was checked), and an address claim with white space or
// control characters around it (it was trimmed, then matched to that address's record).
func TestVerifyRefusesClaimsThatAreNotWhatTheyLookLike(t *testing.T) {
	t.Parallel()
	iss := idtokentest.Start(t, 0)
	v := idtoken.New(oidcConfig(iss.URL), idtoken.Options{})
	upn := oidcConfig(iss.URL)
	upn.EmailClaim = "upn"
	vUPN := idtoken.New(upn, idtoken.Options{})
	now := time.Now()
	future := now.Add(time.Hour).Unix()
	for name, c := range map[string]struct {
		claims map[string]any
		v      *idtoken.Verifier
		reason string
	}{
		"nbf a string, in the future": {claims: map[string]any{"nbf": itoa(int(future))}, reason: "the nbf claim is not a number"},
		"nbf a string, in the past":   {claims: map[string]any{"nbf": "1767225600"}, reason: "the nbf claim is not a number"},
		"iat a string":                {claims: map[string]any{"iat": itoa(int(now.Unix()))}, reason: "the iat claim is not a number"},
		"exp a string":                {claims: map[string]any{"exp": itoa(int(future))}, reason: "the exp claim is not a number"},
		"nbf an array":                {claims: map[string]any{"nbf": []any{}}, reason: "the nbf claim is not a number"},
		"iat a boolean":               {claims: map[string]any{"iat": true}, reason: "the iat claim is not a number"},
		"email led by a space":        {claims: map[string]any{"email": " victim@example.com"}, reason: "the email claim has white space or control characters around the address"},
		"email ended by a tab":        {claims: map[string]any{"email": "victim@example.com\t"}, reason: "white space or control characters"},
		"email ended by a newline":    {claims: map[string]any{"email": "victim@example.com\n"}, reason: "white space or control characters"},
		"email led by U+00A0":         {claims: map[string]any{"email": "\u00a0victim@example.com"}, reason: "white space or control characters"},
		"email ended by U+3000":       {claims: map[string]any{"email": "victim@example.com\u3000"}, reason: "white space or control characters"},
		"email led by U+200B":         {claims: map[string]any{"email": "\u200bvictim@example.com"}, reason: "white space or control characters"},
		"email ended by U+0000":       {claims: map[string]any{"email": "victim@example.com\u0000"}, reason: "white space or control characters"},
		"email led by U+0085":         {claims: map[string]any{"email": "\u0085victim@example.com"}, reason: "white space or control characters"},
		"upn padded":                  {claims: map[string]any{"upn": "victim@example.com ", "email": "victim@example.com"}, v: vUPN, reason: "the upn claim has white space"},
		"upn, email padded":           {claims: map[string]any{"upn": "victim@example.com", "email": " victim@example.com"}, v: vUPN, reason: "the email claim has white space"},
		"numbers as numbers":          {claims: map[string]any{"nbf": now.Add(-time.Minute).Unix(), "iat": float64(now.Unix()) + 0.25}},
		"upn and email as written":    {claims: map[string]any{"upn": "victim@example.com", "email": "victim@example.com"}, v: vUPN},
	} {
		t.Run(name, func(t *testing.T) {
			claims := map[string]any{"aud": aud, "sub": "s1", "email": "victim@example.com", "email_verified": true}
			for k, x := range c.claims {
				claims[k] = x
			}
			verifier := v
			if c.v != nil {
				verifier = c.v
			}
			id, err := verify(t, verifier, iss.Mint(t, idtokentest.Token{Claims: claims}))
			if c.reason == "" {
				require.NoError(t, err)
				require.Equal(t, "victim@example.com", id.Email)
				return
			}
			requireRefused(t, err, idtoken.ErrInvalid, c.reason)
			require.NotContains(t, err.Error(), "victim", "the reason names no address")
		})
	}
}
