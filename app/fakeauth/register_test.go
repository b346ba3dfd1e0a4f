package fakeauth_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

func TestRegisterBodies(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]any{
		"registered true":          `{"registered": true}`,
		"no body":                  nil,
		"empty object":             `{}`,
		"extra keys ignored":       `{"registered": true, "other": 1}`,
		"white space only":         " \n",
		"registered null (absent)": `{"registered": null}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t)
			perm, _ := f.privateIdentity(t, "erin@example.com")
			// frank gets a provisional identity first, then a permanent one beside it.
			prov := f.publicIdentities(t, "frank@example.com")[0]
			perm2, _ := f.privateIdentity(t, "frank@example.com")
			require.Equal(t, prov, f.publicIdentities(t, "frank@example.com")[0])

			resp := apptest.Do(t, f.http, http.MethodPut, f.base+"/private_identity?email=frank%40example.com", body)
			require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
			require.JSONEq(t, `{}`, string(resp.Body))
			require.Equal(t, apptest.PublicOf(t, perm2), f.publicIdentities(t, "frank@example.com")[0], "registered")
			require.Equal(t, apptest.PublicOf(t, perm), f.publicIdentities(t, "erin@example.com")[0], "others unchanged")
		})
	}
}

func TestRegisterIsIdempotent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.publicIdentities(t, "gina@example.com")
	perm, _ := f.privateIdentity(t, "gina@example.com")
	f.register(t, "gina@example.com")
	f.register(t, "gina@example.com")
	require.Equal(t, apptest.PublicOf(t, perm), f.publicIdentities(t, "gina@example.com")[0])
}
