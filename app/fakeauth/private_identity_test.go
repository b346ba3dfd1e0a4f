package fakeauth_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/identity"
)

func TestPrivateIdentityIsStableAndValid(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	perm, prov := f.privateIdentity(t, "alice@example.com")
	require.Empty(t, prov, "a fresh email has no provisional identity")
	again, prov2 := f.privateIdentity(t, "alice@example.com")
	require.Equal(t, perm, again, "same permanent identity every call")
	require.Empty(t, prov2)

	other, _ := f.privateIdentity(t, "bob@example.com")
	require.NotEqual(t, perm, other, "another email is another user")

	// The user ID hashed into the identity is the stored random UUID.
	rec, err := f.env.Store.Record(f.app.ID, "alice@example.com")
	require.NoError(t, err)
	_, err = uuid.Parse(rec.UserID)
	require.NoError(t, err, "user ID is a UUID")
	require.NoError(t, apptest.CheckPermanent(t, f.app, perm).CheckUserID(rec.UserID))

	// The public identity served is the library's derivation, byte for byte.
	pubs := f.publicIdentities(t, "alice@example.com")
	require.Equal(t, apptest.PublicOf(t, perm), pubs[0])
	doc := decodePublic(t, pubs[0])
	require.Equal(t, identity.TargetUser, doc["target"])
	require.Equal(t, base64.StdEncoding.EncodeToString(f.app.ID), doc["trustchain_id"])
}

func TestPrivateIdentityNormalisesEmails(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	perm, _ := f.privateIdentity(t, "Alice@example.com")

	for name, email := range map[string]string{
		"upper-case domain":   "Alice@EXAMPLE.com",
		"surrounding spaces":  "  Alice@example.com\t",
		"mixed-case domain":   "Alice@Example.Com",
		"spaces and case mix": " Alice@ExAmPlE.cOm ",
	} {
		t.Run(name, func(t *testing.T) {
			got, _ := f.privateIdentity(t, email)
			require.Equal(t, perm, got)
		})
	}
	t.Run("local part is case-sensitive", func(t *testing.T) {
		got, _ := f.privateIdentity(t, "alice@example.com")
		require.NotEqual(t, perm, got)
	})
}

// A '+' must be sent as %2B: a raw '+' is a space (as url.QueryEscape encodes one), so it
// fails loudly with a hint rather than naming another address.
func TestPrivateIdentityPlusInQuery(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	perm, _ := f.privateIdentity(t, "me+test@example.com") // sent as me%2Btest%40example.com
	encoded := f.get(t, f.base+"/private_identity?email=me%2Btest@example.com")
	require.Equal(t, http.StatusOK, encoded.Status, "body: %s", encoded.Body)
	require.Equal(t, perm, encoded.Map(t)["private_permanent_identity"])

	raw := f.get(t, f.base+"/private_identity?email=me+test@example.com")
	require.Equal(t, http.StatusBadRequest, raw.Status, "body: %s", raw.Body)
	require.Equal(t, "invalid_email", raw.ErrorCode(t))
	require.Contains(t, string(raw.Body), "%2B")
}

// Clients send the app ID in several encodings; all name the same app.
func TestAppIDEncodings(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	want, _ := f.privateIdentity(t, "carol@example.com")
	std := base64.StdEncoding.EncodeToString(f.app.ID)
	forms := map[string]string{
		"url-safe unpadded (JS)":            base64.RawURLEncoding.EncodeToString(f.app.ID),
		"url-safe padded (sdk-go)":          base64.URLEncoding.EncodeToString(f.app.ID),
		"url-safe, padding %3D (native)":    strings.ReplaceAll(base64.URLEncoding.EncodeToString(f.app.ID), "=", "%3D"),
		"standard padded, '/' as %2F":       strings.ReplaceAll(strings.ReplaceAll(std, "/", "%2F"), "=", "%3D"),
		"standard unpadded, '/' as %2F":     strings.ReplaceAll(strings.TrimRight(std, "="), "/", "%2F"),
		"standard padded, '+' percent-enc.": strings.NewReplacer("/", "%2F", "+", "%2B").Replace(std),
	}
	for name, id := range forms {
		t.Run(name, func(t *testing.T) {
			resp := f.get(t, "/apps/"+id+"/private_identity?email=carol%40example.com")
			require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
			require.Equal(t, want, resp.Map(t)["private_permanent_identity"])
		})
	}
}

func TestDisposablePrivateIdentity(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seen := map[string]bool{}
	users := map[string]bool{}
	for range 3 {
		resp := f.get(t, f.base+"/disposable_private_identity")
		require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
		m := resp.Map(t)
		require.Len(t, m, 1, "only private_permanent_identity: %s", resp.Body)
		require.Equal(t, "no-store", resp.Header.Get("Cache-Control"), "a private identity is never cached")
		perm := m["private_permanent_identity"].(string)
		f.keep(perm)
		p := apptest.CheckPermanent(t, f.app, perm)
		require.False(t, seen[perm], "a new identity every call")
		require.False(t, users[string(p.UserID)], "a new user every call")
		seen[perm], users[string(p.UserID)] = true, true
	}
	n, err := f.env.Store.CountRecords(f.app.ID)
	require.NoError(t, err)
	require.Zero(t, n, "disposable identities are never stored")
}
