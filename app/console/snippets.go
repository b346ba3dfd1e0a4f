package console

import (
	"fmt"
	"net/url"
	"strings"

	"github.com/idvault/idvault/app/admin"
)

// snippet is a ready-to-run example for a test-mode app, with its real URL and app ID.
type snippet struct {
	Title, Lang, Code, Note string
	Off                     string // the config switch, when the interface is off here
}

func (h *Handler) on(key string) bool {
	for _, i := range h.d.Interfaces {
		if i.Key == key {
			return i.On
		}
	}
	return false
}

func (h *Handler) snippets(v admin.AppView, base string) []snippet {
	base = strings.TrimRight(base, "/")
	appPath := base + "/apps/" + v.URLID
	var out []snippet
	fa := snippet{Title: "Fake authentication (curl)", Lang: "sh", Code: fmt.Sprintf(`# Private identity of an email (the same every time), then public identities.
curl -s "%[1]s/private_identity?email=alice%%40example.com"
curl -s "%[1]s/public_identities?emails=alice%%40example.com,bob%%40example.com"
# Mark alice as registered with Tanker.
curl -s -X PUT "%[1]s/private_identity?email=alice%%40example.com" \
  -H 'Content-Type: application/json' -d '{"registered": true}'
# A throwaway user.
curl -s "%[1]s/disposable_private_identity"`, appPath)}
	js := snippet{Title: "Tanker SDK tests (JavaScript)", Lang: "js",
		Note: "Point @tanker/fake-authentication at this server instead of fakeauth.tanker.io.",
		Code: fmt.Sprintf(`import FakeAuthentication from '@tanker/fake-authentication';

const appId = '%s';
const fakeAuth = new FakeAuthentication({ appId, url: '%s' });

const { identity, provisionalIdentity } = await fakeAuth.getIdentity('alice@example.com');
const [bobPublicIdentity] = await fakeAuth.getPublicIdentities(['bob@example.com']);
await fakeAuth.setIdentityRegistered('alice@example.com');`, v.ID, base)}
	if !h.on("fakeauth.enabled") {
		fa.Off, js.Off, js.Note = "fakeauth.enabled", "fakeauth.enabled", ""
	}
	out = append(out, fa, js)

	ver := snippet{Title: "Email verification (curl)", Lang: "sh",
		Note: "AUTH_TOKEN is the app's auth token, shown once when the app was created or its token rotated.",
		Code: fmt.Sprintf(`AUTH_TOKEN='<the auth token>'
curl -s %[1]s/verification/email -H 'Content-Type: application/json' -d '{
  "app_id": "%[2]s", "auth_token": "'"$AUTH_TOKEN"'",
  "email_data": {"subject": "Your code: SERVICE_VERIFICATION_CODE", "to_email": "alice@example.com",
                 "text": "Your code is SERVICE_VERIFICATION_CODE"}}'
# Test-mode apps read the code back, then verify it.
curl -s %[1]s/verification/email/code -H 'Content-Type: application/json' \
  -d '{"app_id": "%[2]s", "auth_token": "'"$AUTH_TOKEN"'", "email": "alice@example.com"}'
curl -s %[1]s/verification/email/verify -H 'Content-Type: application/json' \
  -d '{"app_id": "%[2]s", "auth_token": "'"$AUTH_TOKEN"'", "email": "alice@example.com", "verification_code": "<the code>"}'`, base, v.ID)}
	if !h.on("verification.enabled") {
		ver.Off, ver.Note = "verification.enabled", ""
	}
	out = append(out, ver)

	is := snippet{Title: "Reference identity server (curl)", Lang: "sh", Code: fmt.Sprintf(`curl -s %[1]s/identity -H 'Content-Type: application/json' -d '{"email": "carol@example.com"}'
curl -s %[1]s/public_identity -H 'Content-Type: application/json' -d '{"email": "carol@example.com"}'
curl -s -X PATCH %[1]s/identity -H 'Content-Type: application/json' -d '{"email": "carol@example.com"}'`, base)}
	switch {
	case !h.on("identity_server.enabled"):
		is.Off = "identity_server.enabled"
	case !sameApp(h.d.IdentityServerAppID, v):
		is.Off = "identity_server.app_id"
		is.Note = "The identity server here serves another app."
	default:
		is.Note = "With identity_server.token set, add -H 'Authorization: Bearer <token>'."
	}
	out = append(out, is)
	return out
}

// sameApp compares a configured app ID (any base64 form) with an app.
func sameApp(configured string, v admin.AppView) bool {
	c := strings.TrimRight(strings.NewReplacer("-", "+", "_", "/").Replace(configured), "=")
	c, _ = url.PathUnescape(c)
	return c != "" && c == strings.TrimRight(v.ID, "=")
}
