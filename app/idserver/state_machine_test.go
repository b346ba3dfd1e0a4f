package idserver_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/identity"
)

// One test per row of the state machine, through HTTP.
func TestStateMachine(t *testing.T) {
	t.Parallel()
	const e = "user@example.com"
	for name, run := range map[string]func(t *testing.T, f *fixture){
		"no record + POST /public_identity: creates and stores a provisional identity": func(t *testing.T, f *fixture) {
			pub := f.publicIdentity(t, e)
			doc := decodePublic(t, pub)
			require.Equal(t, identity.TargetHashedEmail, doc["target"])
			require.Equal(t, base64.StdEncoding.EncodeToString(f.app.ID), doc["trustchain_id"])
			require.Equal(t, base64.StdEncoding.EncodeToString(identity.HashEmail(e)), doc["value"])
			require.Equal(t, pub, f.publicIdentity(t, e), "stored: the same on the next call")
			r := f.identity(t, e)
			require.Equal(t, pub, apptest.PublicOf(t, r.Provisional()), "it is the provisional identity of the record")
		},
		"no record + POST /identity: creates the permanent identity, unregistered": func(t *testing.T, f *fixture) {
			r := f.identity(t, e)
			require.False(t, r.Registered)
			require.Nil(t, r.ProvisionalIdentity)
		},
		"no record + PATCH /identity: 400 unknown user": func(t *testing.T, f *fixture) {
			resp := f.do(t, http.MethodPatch, "/identity", map[string]any{"email": e})
			requireError(t, resp, apierr.UnknownUser, "unknown user")
			r := f.identity(t, e)
			require.False(t, r.Registered, "nothing was recorded")
		},
		"provisional only + POST /public_identity: the stored provisional identity": func(t *testing.T, f *fixture) {
			pub := f.publicIdentity(t, e)
			require.Equal(t, pub, f.publicIdentity(t, e))
		},
		"provisional only + POST /identity: creates the permanent identity, keeps the provisional": func(t *testing.T, f *fixture) {
			pub := f.publicIdentity(t, e)
			r := f.identity(t, e)
			require.NotNil(t, r.ProvisionalIdentity)
			require.Equal(t, pub, apptest.PublicOf(t, r.Provisional()))
			require.False(t, r.Registered)
			require.Equal(t, r, f.identity(t, e))
		},
		"provisional only + PATCH /identity: 400 unknown user (no user yet)": func(t *testing.T, f *fixture) {
			pub := f.publicIdentity(t, e)
			resp := f.do(t, http.MethodPatch, "/identity", map[string]any{"email": e})
			requireError(t, resp, apierr.UnknownUser, "unknown user")
			r := f.identity(t, e)
			require.False(t, r.Registered, "a permanent identity created later starts unregistered")
			require.Equal(t, pub, f.publicIdentity(t, e))
		},
		"permanent, unregistered, provisional exists + POST /public_identity: the provisional's": func(t *testing.T, f *fixture) {
			f.publicIdentity(t, e)
			r := f.identity(t, e)
			require.Equal(t, apptest.PublicOf(t, r.Provisional()), f.publicIdentity(t, e))
		},
		"permanent, unregistered, no provisional + POST /public_identity: creates one beside": func(t *testing.T, f *fixture) {
			before := f.identity(t, e)
			pub := f.publicIdentity(t, e)
			require.NotEqual(t, apptest.PublicOf(t, before.ServiceIdentity), pub)
			require.Equal(t, identity.TargetHashedEmail, decodePublic(t, pub)["target"])
			after := f.identity(t, e)
			require.Equal(t, before.ID, after.ID, "the permanent identity is kept")
			require.Equal(t, before.ServiceIdentity, after.ServiceIdentity)
			require.Equal(t, pub, apptest.PublicOf(t, after.Provisional()), "stored beside it")
			require.Equal(t, pub, f.publicIdentity(t, e))
		},
		"permanent + PATCH /identity: registered": func(t *testing.T, f *fixture) {
			before := f.identity(t, e)
			f.register(t, e)
			after := f.identity(t, e)
			require.True(t, after.Registered)
			require.Equal(t, before.ID, after.ID)
			require.Equal(t, before.ServiceIdentity, after.ServiceIdentity)
			f.register(t, e) // idempotent
			require.Equal(t, after, f.identity(t, e))
		},
		"registered + POST /public_identity: the permanent identity's": func(t *testing.T, f *fixture) {
			f.publicIdentity(t, e) // a provisional identity exists too
			r := f.identity(t, e)
			f.register(t, e)
			pub := f.publicIdentity(t, e)
			require.Equal(t, apptest.PublicOf(t, r.ServiceIdentity), pub)
			require.Equal(t, identity.TargetUser, decodePublic(t, pub)["target"])
		},
		"registered, no provisional + POST /public_identity: the permanent identity's": func(t *testing.T, f *fixture) {
			r := f.identity(t, e)
			f.register(t, e)
			require.Equal(t, apptest.PublicOf(t, r.ServiceIdentity), f.publicIdentity(t, e))
			require.Nil(t, f.identity(t, e).ProvisionalIdentity, "no provisional identity was created")
		},
		"permanent + POST /identity: the same record": func(t *testing.T, f *fixture) {
			r := f.identity(t, e)
			require.Equal(t, r, f.identity(t, e))
			require.Equal(t, r, f.identity(t, e))
		},
		"registered + POST /identity: the same record": func(t *testing.T, f *fixture) {
			f.identity(t, e)
			f.register(t, e)
			r := f.identity(t, e)
			require.True(t, r.Registered)
			require.Equal(t, r, f.identity(t, e))
		},
	} {
		for mode, fixture := range conformanceModes(t, true) {
			t.Run(mode+"/"+name, func(t *testing.T) {
				t.Parallel()
				run(t, fixture(t))
			})
		}
	}
}

// Emails are normalised as in the fake authentication server.
func TestEmailNormalisation(t *testing.T) {
	t.Parallel()
	for mode, fixture := range conformanceModes(t, false) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testEmailNormalisation(t, fixture(t))
		})
	}
}

func testEmailNormalisation(t *testing.T, f *fixture) {
	r := f.identity(t, "Zoe@example.com")
	for name, email := range map[string]string{
		"upper-case domain":  "Zoe@EXAMPLE.COM",
		"surrounding spaces": "  Zoe@example.com \n",
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, r, f.identity(t, email))
		})
	}
	require.NotEqual(t, r.ID, f.identity(t, "zoe@example.com").ID, "the local part is case-sensitive")
}

func decodePublic(t *testing.T, pub string) map[string]string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(pub)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(raw, &m))
	return m
}
