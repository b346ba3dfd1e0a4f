package fakeauth_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/identity"
)

// The SDK tests' sequence (app/fakeauth/doc.go): private(e1), public([e1, e2]), private(e2).
func TestSequencePublicBeforePrivate(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	perm1, _ := f.privateIdentity(t, "e1@example.com")
	pubs := f.publicIdentities(t, "e1@example.com", "e2@example.com")
	perm2, prov2 := f.privateIdentity(t, "e2@example.com")

	require.Equal(t, apptest.PublicOf(t, perm1), pubs[0], "e1 has a permanent identity and no provisional one")
	require.NotEmpty(t, prov2, "public_identities stored a provisional identity for e2")
	require.Equal(t, apptest.PublicOf(t, prov2), pubs[1], "e2 got the public identity of the provisional identity returned later")
	require.NotEqual(t, apptest.PublicOf(t, perm2), pubs[1])
	doc := decodePublic(t, pubs[1])
	require.Equal(t, identity.TargetHashedEmail, doc["target"])
}

// The SDK tests' registration sequence (app/fakeauth/doc.go): public → P; private → {perm, P}; public → P; PUT; public → perm.
func TestSequenceRegistration(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const e = "dave@example.com"
	p := f.publicIdentities(t, e)[0]

	perm, prov := f.privateIdentity(t, e)
	require.Equal(t, apptest.PublicOf(t, prov), p, "private_identity returns the provisional identity already handed out")
	perm2, prov2 := f.privateIdentity(t, e)
	require.Equal(t, perm, perm2, "and the same pair every call")
	require.Equal(t, prov, prov2)

	require.Equal(t, p, f.publicIdentities(t, e)[0], "unregistered: still the provisional identity")
	f.register(t, e)
	require.Equal(t, apptest.PublicOf(t, perm), f.publicIdentities(t, e)[0], "registered: the permanent identity")
	perm3, prov3 := f.privateIdentity(t, e)
	require.Equal(t, perm, perm3, "registration changes no identity")
	require.Equal(t, prov, prov3)
}

func TestPublicIdentitiesOrderAndRepeats(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	perm, _ := f.privateIdentity(t, "known@example.com")
	pubs := f.publicIdentities(t, "new@example.com", "known@example.com", "new@example.com", "Known@Example.com")
	require.Equal(t, pubs[0], pubs[2], "a repeated email gets the same identity at each position")
	require.Equal(t, apptest.PublicOf(t, perm), pubs[1])
	require.NotEqual(t, pubs[0], pubs[1])

	// The provisional identity created once is the one returned later.
	_, prov := f.privateIdentity(t, "new@example.com")
	require.Equal(t, apptest.PublicOf(t, prov), pubs[0])
	// "Known@Example.com" is another local part: its own identity, email echoed as sent.
	require.NotEqual(t, pubs[1], pubs[3])
}

// The list parameter is accepted as emails or email, commas raw or %2C, or repeated.
func TestPublicIdentitiesParameterForms(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	want := f.publicIdentities(t, "a@example.com", "b@example.com")
	for name, query := range map[string]string{
		"emails, raw comma":      "emails=a%40example.com,b%40example.com",
		"emails, %2C":            "emails=a%40example.com%2Cb%40example.com",
		"email, raw comma":       "email=a@example.com,b@example.com",
		"email, %2C":             "email=a%40example.com%2Cb%40example.com",
		"repeated emails":        "emails=a@example.com&emails=b@example.com",
		"email then emails":      "email=a@example.com&emails=b@example.com",
		"other parameters mixed": "x=1&emails=a@example.com&y=2&emails=b@example.com",
	} {
		t.Run(name, func(t *testing.T) {
			resp := f.get(t, f.base+"/public_identities?"+query)
			require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
			var got []entry
			resp.JSON(t, &got)
			require.Equal(t, []entry{{"a@example.com", want[0]}, {"b@example.com", want[1]}}, got)
		})
	}
	t.Run("empty parameter is the empty list", func(t *testing.T) {
		resp := f.get(t, f.base+"/public_identities?emails=")
		require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
		require.JSONEq(t, `[]`, string(resp.Body))
	})
}

func TestPublicIdentitiesListLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	list := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("user%d@example.com", i)
		}
		return out
	}
	require.Len(t, f.publicIdentities(t, list(100)...), 100, "100 emails by default")

	small := newFixture(t, func(c *config.FakeAuth) { c.MaxEmails = 3 })
	require.Len(t, small.publicIdentities(t, list(3)...), 3)
	resp := small.get(t, small.base+"/public_identities?emails=a@example.com,b@example.com,c@example.com,d@example.com")
	require.Equal(t, http.StatusBadRequest, resp.Status)
	require.Equal(t, "too_many_emails", resp.ErrorCode(t))
}

// max_emails is reachable with realistic addresses: the request-header buffer grows with it.
func TestPublicIdentitiesLimitReachableWithLongAddresses(t *testing.T) {
	t.Parallel()
	list := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("firstname.lastname.%08d@mail.example.org", i) // 44 characters
			require.Len(t, out[i], 44)
		}
		return out
	}
	f := newFixture(t)
	require.Len(t, f.publicIdentities(t, list(100)...), 100)
	big := newFixture(t, func(c *config.FakeAuth) { c.MaxEmails = 1000 })
	require.Len(t, big.publicIdentities(t, list(1000)...), 1000)
}
