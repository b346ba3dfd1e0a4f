package idtoken_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/idvault/idvault/app/idtoken"
)

// Whatever the bytes, Verify never panics, refuses with a *Refusal of a known kind, and
// accepts only the one good token the provider's key signed (the other signed seeds break a
// claim rule). The provider is an in-process discovery document and key set on loopback
// (fuzzing cannot wait for node).
func FuzzVerify(f *testing.F) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		f.Fatal(err)
	}
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/openid-configuration":
			_ = json.NewEncoder(w).Encode(map[string]string{"issuer": srv.URL, "jwks_uri": srv.URL + "/jwks"})
		case "/jwks":
			_ = json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "ES256", Use: "sig"}}})
		default:
			http.NotFound(w, r)
		}
	}))
	f.Cleanup(srv.Close)
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: jose.JSONWebKey{Key: key, KeyID: "k1"}}, nil)
	if err != nil {
		f.Fatal(err)
	}
	sign := func(more map[string]any) string {
		c := map[string]any{"iss": srv.URL, "aud": aud, "exp": time.Now().Add(time.Hour).Unix(), "email": "fuzz@example.com", "email_verified": true}
		for k, x := range more {
			c[k] = x
		}
		claims, _ := json.Marshal(c)
		jws, err := signer.Sign(claims)
		if err != nil {
			f.Fatal(err)
		}
		tok, err := jws.CompactSerialize()
		if err != nil {
			f.Fatal(err)
		}
		return tok
	}
	good := sign(nil)
	v := idtoken.New(oidcConfig(srv.URL), idtoken.Options{})
	if _, err := v.Verify(context.Background(), good); err != nil {
		f.Fatalf("the signed token is refused: %v", err)
	}
	parts := strings.Split(good, ".")
	for _, seed := range []string{
		good, "", "garbage", "a.b.c", "..", parts[0] + "." + parts[1] + ".",
		parts[0] + "." + parts[1] + "." + parts[2][:10],
		"eyJhbGciOiJub25lIn0." + parts[1] + ".",
		"eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0." + parts[1] + "." + parts[2],
		"eyJhbGciOiJFUzI1NiIsImtpZCI6Im90aGVyIn0." + parts[1] + "." + parts[2],
		// Signed by the key, refused for their azp (authorized party): another party, several
		// audiences without azp, an azp that is not a string.
		sign(map[string]any{"azp": "another-client"}),
		sign(map[string]any{"aud": []string{"another-client", aud}}),
		sign(map[string]any{"aud": []string{aud, "another-client"}, "azp": "another-client"}),
		sign(map[string]any{"azp": nil}),
		sign(map[string]any{"azp": 42}),
		sign(map[string]any{"azp": []string{aud}}),
		// Signed by the key, refused for claims that are not what they look like: a time claim
		// written as a string, an email with white space or a control character around it.
		sign(map[string]any{"nbf": "1767225600"}),
		sign(map[string]any{"iat": "1767225600"}),
		sign(map[string]any{"exp": "4102444800"}),
		sign(map[string]any{"email": " fuzz@example.com"}),
		sign(map[string]any{"email": "fuzz@example.com\u3000"}),
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		id, err := v.Verify(context.Background(), raw)
		if err == nil {
			if raw != good || id.Email != "fuzz@example.com" {
				t.Fatalf("accepted a token other than the good one: %q", raw)
			}
			return
		}
		r, ok := err.(*idtoken.Refusal)
		if !ok || (r.Kind != idtoken.ErrInvalid && r.Kind != idtoken.ErrNoEmail && r.Kind != idtoken.ErrUnverified) {
			t.Fatalf("refusal of an unexpected kind: %T %v", err, err)
		}
		if strings.Contains(r.Reason, raw) && len(raw) > 8 {
			t.Fatalf("the reason quotes the token: %q", r.Reason)
		}
	})
}
