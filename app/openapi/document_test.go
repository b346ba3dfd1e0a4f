package openapi

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
)

// openapi.json is written from the description below (go test ./app/openapi -update), so the
// error answers of every operation come from the catalogue's own codes, statuses and messages.
// Change an operation here, run with -update, and commit both files; the test fails while they
// differ. Whether the code keeps to the document is checked by every HTTP test
// (app/apptest/openapi.go).

var update = flag.Bool("update", false, "rewrite openapi.json and exit.json from their descriptions (document_test.go, exit_document_test.go)")

func TestDocumentIsUpToDate(t *testing.T) {
	requireUpToDate(t, "openapi.json", build(), JSON, "document_test.go")
}

// requireUpToDate fails unless got, the document built from its description in source, is
// the embedded file name; with -update it writes got to name instead.
func requireUpToDate(t *testing.T, name string, got, embedded []byte, source string) {
	t.Helper()
	if *update {
		require.NoError(t, os.WriteFile(name, got, 0o644))
		return
	}
	if !bytes.Equal(got, embedded) {
		t.Fatalf("%s differs from the description in %s: run go test ./app/openapi -update and commit it", name, source)
	}
}

const (
	traceID = "0b6c5e5e-8f3a-4d2e-9a57-3c1f1d2b7e40"
	appID   = "tpoxyNzh0hU9G2i9agMvHyyd+pO6zGCjO9BfhrCLjd4="
	urlID   = "tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4"
	privID  = "eyJ0cnVzdGNoYWluX2lkIjoidHBveHlOemgwaFU5RzJpOWFnTXZIeXlkK3BPNnpHQ2pPOUJmaHJDTGpkND0iLCJ0YXJnZXQiOiJ1c2VyIiwidmFsdWUiOiIuLi4ifQ=="
	pubID   = "eyJ0cnVzdGNoYWluX2lkIjoidHBveHlOemgwaFU5RzJpOWFnTXZIeXlkK3BPNnpHQ2pPOUJmaHJDTGpkND0iLCJ0YXJnZXQiOiJ1c2VyIn0="
)

func build() []byte {
	b := newBuilder([]apierr.Code{apierr.InternalError, apierr.HostNotAllowed, apierr.HeaderTooLarge, apierr.MalformedRequest}, []apierr.Code{apierr.BodyTooLarge})
	pApp := m{"$ref": "#/components/parameters/AppID"}
	pAdminApp := m{"$ref": "#/components/parameters/AdminAppID"}
	pEmail := m{"$ref": "#/components/parameters/Email"}
	adminSec := list{m{"adminToken": list{}}}
	adminErr := []apierr.Code{apierr.AdminUnauthorized, apierr.AdminDisabled, apierr.AdminLocked, apierr.FeatureNotEnabled}
	faErr := []apierr.Code{apierr.InvalidAppID, apierr.AppNotFound, apierr.AppIsNotTest, apierr.AppNoSecret, apierr.FeatureNotEnabled}
	isErr := []apierr.Code{apierr.Unauthorized, apierr.ISAppUnavailable, apierr.FeatureNotEnabled, apierr.NoEmailProvided, apierr.InvalidEmailIS, apierr.UnsupportedMediaType,
		apierr.InvalidToken, apierr.EmailNotVerified, apierr.NoEmailClaim, apierr.IdentityProviderUnavailable}
	vErr := []apierr.Code{apierr.InvalidBody, apierr.InvalidEmail, apierr.InvalidAuthToken, apierr.AppNotFound, apierr.FeatureNotEnabled}
	with := func(base []apierr.Code, more ...apierr.Code) []apierr.Code {
		return append(slices.Clone(base), more...)
	}
	appExample := m{"id": appID, "url_id": urlID, "name": "demo", "test": true, "declared": false,
		"legacy_errors": false, "registered_users_only": false,
		"created_at": "2026-11-22T23:00:00Z", "updated_at": "2026-11-22T23:00:00Z"}

	// Operations.
	b.add("/healthz", "get", operation{id: "healthz", tag: "operations", summary: "Liveness", desc: "Answers as long as the process serves HTTP.",
		responses: merge(jsonOK("alive", obj([]string{"status"}, m{"status": m{"const": "ok"}}), m{"status": "ok"}), b.errors(tanker, false))})
	readiness := ref("Readiness")
	b.add("/readyz", "get", operation{id: "readyz", tag: "operations", summary: "Readiness",
		desc: "Runs the readiness checks (store, SMTP when verification is on, the identity server's app when it is on), each result cached for 2 s, and lists the warnings an operator must see (fake authentication on). 200 when every check passes, 503 otherwise.",
		responses: merge(
			jsonOK("every check passed", readiness, m{"status": "ready", "checks": m{"store": "ok", "smtp": "ok"}, "warnings": list{}}),
			ok("503", "a check failed (the body names it)", readiness, m{"status": "not_ready", "checks": m{"store": "ok", "smtp": "failed: dial: connection refused"}, "warnings": list{}}, "application/json"),
			b.errors(tanker, false))})
	b.add("/metrics", "get", operation{id: "metrics", tag: "operations", summary: "Prometheus metrics",
		desc:      "Metrics in the Prometheus text exposition format (`idvault_build_info`, `idvault_http_requests_total`, `idvault_http_request_duration_seconds`, `idvault_admin_auth_*`, `idvault_verification_*`, Go runtime and process). `feature_not_enabled` when `metrics.enabled` is false, or when `metrics.listen` serves them on an address of their own.",
		responses: merge(ok("200", "metrics", m{"type": "string"}, "# HELP idvault_http_requests_total HTTP requests by route pattern, method and status.\n", "text/plain"), b.errors(tanker, false, apierr.FeatureNotEnabled))})
	b.add("/openapi.json", "get", operation{id: "openapi", tag: "operations", summary: "This document",
		desc:      "The OpenAPI description of every interface (this file, embedded in the binary).",
		responses: merge(jsonOK("the document", m{"type": "object", "required": list{"openapi", "info", "paths"}}, nil), b.errors(tanker, false))})

	// Admin API.
	b.add("/admin/apps", "post", operation{id: "createApp", tag: "admin", summary: "Create an app",
		desc: "Creates an app with a fresh app secret and auth token. The answer is the only time either is shown.",
		responses: merge(ok("201", "the app, its secret and its auth token (shown once)", ref("CreatedApp"),
			m{"app": appExample, "app_secret": "cTMoGGUKhwN47ypq4xAXAtVkNWeyUtMltQnYwJhxWYSvqjPVGmXd2wwa7y17QtPTZhn8bxb015CZC/e4ZI7+MQ==", "auth_token": "q3Zl0y4m2yQ1mFv0m1i7y0r8YQ2d3yQj1h0v2QqM4xE"}, "application/json"),
			b.errors(tanker, true, with(adminErr, apierr.InvalidBody, apierr.AppNameTaken)...)),
		body: jsonBody(ref("CreateAppRequest"), m{"name": "demo", "test": true}, true, ""), security: adminSec})
	b.add("/admin/apps", "get", operation{id: "listApps", tag: "admin", summary: "List apps",
		desc:      "Every app, declared in the config file and created at runtime, ordered by name.",
		responses: merge(jsonOK("the apps", obj([]string{"apps"}, m{"apps": m{"type": "array", "items": ref("App")}}), m{"apps": list{appExample}}), b.errors(tanker, false, adminErr...)),
		security:  adminSec})
	b.add("/admin/apps/{app_id}", "get", operation{id: "getApp", tag: "admin", summary: "Show an app", desc: "One app, never its secret or auth token.",
		responses: merge(jsonOK("the app", ref("AppEnvelope"), m{"app": appExample}), b.errors(tanker, false, with(adminErr, apierr.InvalidAppID, apierr.AppNotFound)...)),
		params:    list{pAdminApp}, security: adminSec})
	changed := merge(appExample, m{"registered_users_only": true})
	b.add("/admin/apps/{app_id}", "patch", operation{id: "updateApp", tag: "admin", summary: "Change an app's options",
		desc:      "Sets the options named in the body, at least one (an empty body, or nulls only, is invalid_body: nothing to change); an option left out keeps its value. Declared apps are read-only.",
		responses: merge(jsonOK("the changed app", ref("AppEnvelope"), m{"app": changed}), b.errors(tanker, true, with(adminErr, apierr.InvalidAppID, apierr.AppNotFound, apierr.AppIsDeclared, apierr.InvalidBody)...)),
		params:    list{pAdminApp}, body: jsonBody(ref("UpdateAppRequest"), m{"registered_users_only": true}, true, ""), security: adminSec})
	b.add("/admin/apps/{app_id}", "delete", operation{id: "deleteApp", tag: "admin", summary: "Delete an app",
		desc:      "Deletes the app with every identity record, code and counter kept for it. Declared apps are read-only. It takes no body (one is invalid_body, and nothing is deleted).",
		responses: merge(jsonOK("the deleted app's ID", obj([]string{"deleted"}, m{"deleted": ref("StdAppID")}), m{"deleted": appID}), b.errors(tanker, true, with(adminErr, apierr.InvalidAppID, apierr.AppNotFound, apierr.AppIsDeclared, apierr.InvalidBody)...)),
		params:    list{pAdminApp}, security: adminSec})
	b.add("/admin/apps/{app_id}/rotate-token", "post", operation{id: "rotateToken", tag: "admin", summary: "Rotate an app's auth token",
		desc:      "Replaces the auth token; the old one stops working at once. The new one is shown only in this answer. It takes no body (one is invalid_body, and the token is kept).",
		responses: merge(jsonOK("the app and its new auth token (shown once)", ref("RotatedToken"), m{"app": appExample, "auth_token": "Vb4n6QmQ0m0l8wA9T1h2e3n4e5w6t7o8k9e0n1a2b3c"}), b.errors(tanker, true, with(adminErr, apierr.InvalidAppID, apierr.AppNotFound, apierr.AppIsDeclared, apierr.InvalidBody)...)),
		params:    list{pAdminApp}, security: adminSec})
	b.add("/admin/backup", "get", operation{id: "backup", tag: "admin", summary: "Hot backup",
		desc: "Streams a consistent copy of the data file (a bbolt file `idvault serve` opens as is, with the same master key; sealed values stay sealed).",
		responses: merge(m{"200": m{"description": "the data file",
			"headers": m{"Content-Disposition": m{"description": `attachment; filename="idvault-<UTC time>.db"`, "schema": m{"type": "string"}}},
			"content": m{"application/octet-stream": m{}}}}, b.errors(tanker, false, adminErr...)),
		security: adminSec})

	// Fake authentication server.
	identity := ref("Identity")
	b.add("/apps/{app_id}/private_identity", "get", operation{id: "privateIdentity", tag: "fake authentication", summary: "Private identity of an email",
		desc: "The email's permanent identity, the same every time (created and stored on first use), and its provisional identity when one exists.",
		responses: merge(jsonOK("the private identities", obj([]string{"private_permanent_identity"}, m{"private_permanent_identity": identity, "private_provisional_identity": identity}), m{"private_permanent_identity": privID}),
			b.errors(tanker, false, with(faErr, apierr.InvalidEmail)...)),
		params: list{pApp, pEmail}})
	b.add("/apps/{app_id}/private_identity", "put", operation{id: "registerFake", tag: "fake authentication", summary: "Mark an email as registered",
		desc:      "Records that the user registered with Tanker (the public identity is then the permanent one). The body is empty or `{\"registered\": true}`.",
		responses: merge(jsonOK("done", ref("Empty"), m{}), b.errors(tanker, true, with(faErr, apierr.InvalidEmail, apierr.InvalidBody, apierr.UserNotFound)...)),
		params:    list{pApp, pEmail},
		body: jsonBody(m{"type": "object", "properties": m{"registered": m{"enum": list{true, nil}, "description": "only true (null counts as absent); an identity cannot be unregistered"}}},
			m{"registered": true}, false, "optional: no body, white space only, or a JSON object")})
	b.add("/apps/{app_id}/disposable_private_identity", "get", operation{id: "disposableIdentity", tag: "fake authentication", summary: "A throwaway private identity",
		desc:      "A new random user on each call, never stored.",
		responses: merge(jsonOK("a new private identity", obj([]string{"private_permanent_identity"}, m{"private_permanent_identity": identity}), m{"private_permanent_identity": privID}), b.errors(tanker, false, faErr...)),
		params:    list{pApp}})
	b.add("/apps/{app_id}/public_identities", "get", operation{id: "publicIdentities", tag: "fake authentication", summary: "Public identities of emails",
		desc: "One public identity per email, in request order: the permanent one when the email has one and no provisional identity or is registered, the provisional one otherwise (created and stored on first use). At most `fakeauth.max_emails` positions.",
		responses: merge(jsonOK("the public identities", m{"type": "array", "items": obj([]string{"email", "public_identity"}, m{"email": m{"type": "string"}, "public_identity": identity})},
			list{m{"email": "alice@example.com", "public_identity": pubID}}), b.errors(tanker, false, with(faErr, apierr.InvalidEmail, apierr.TooManyEmails)...)),
		params: list{pApp, m{"$ref": "#/components/parameters/Emails"}, m{"$ref": "#/components/parameters/EmailInList"}}})

	// Reference identity server.
	isSec := list{m{}, m{"identityServerToken": list{}}, m{"idToken": list{}}}
	isBody := jsonBody(ref("EmailRequest"), m{"email": "carol@example.com"}, true, "")
	b.add("/identity", "post", operation{id: "identity", tag: "identity server", summary: "Permanent identity of an email",
		desc: "Creates the email's permanent identity on first call (a new UUID, registered false), then returns the same record every time. With an ID token, only the token's own email (after normalisation; `forbidden` 403 otherwise).",
		responses: merge(jsonOK("the user record (`tankerIdentity` is `serviceIdentity` again, under the name of Tanker's sample server)", obj([]string{"id", "serviceIdentity", "tankerIdentity", "registered"}, m{
			"id": m{"type": "string", "format": "uuid"}, "serviceIdentity": identity, "tankerIdentity": identity, "provisionalIdentity": identity, "registered": m{"type": "boolean"}}),
			m{"id": "5b0f7f2e-8d4c-4f7e-9f55-2b1d0c7a9e11", "serviceIdentity": privID, "tankerIdentity": privID, "registered": false}), b.errors(simple, true, with(isErr, apierr.Forbidden)...)),
		body: isBody, security: isSec})
	b.add("/identity", "patch", operation{id: "registerIdentity", tag: "identity server", summary: "Mark a user as registered",
		desc:      "Sets registered to true; answers `OK` in text/plain (as Express's sendStatus(200)). With an ID token, only the token's own email (`forbidden` 403 otherwise).",
		responses: merge(ok("200", "done", m{"const": "OK"}, "OK", "text/plain"), b.errors(simple, true, with(isErr, apierr.UnknownUser, apierr.Forbidden)...)),
		body:      isBody, security: isSec})
	b.add("/public_identity", "post", operation{id: "publicIdentity", tag: "identity server", summary: "Public identity of an email",
		desc:      "The permanent public identity once the user registered; otherwise the provisional one, created beside (never instead of) the permanent one. With an ID token, any email (sharing needs other users' public identities), but one user creates at most `identity_server.oidc.new_identities_per_user` new identities per `new_identities_window` (then `too_many_new_identities` 429 with Retry-After; emails that have a record are still answered).",
		responses: merge(jsonOK("the public identity", obj([]string{"publicIdentity"}, m{"publicIdentity": identity}), m{"publicIdentity": pubID}), b.errors(simple, true, with(isErr, apierr.TooManyNewIdentities)...)),
		body:      isBody, security: isSec})

	// Email verification API.
	b.add("/verification/email", "post", operation{id: "sendVerification", tag: "email verification", summary: "Send a verification code",
		desc:      "Issues a code for email_data.to_email and mails it inside the app's own subject, html and text (every `SERVICE_VERIFICATION_CODE` is replaced by the code). Apps with `legacy_errors` get flat error bodies on this route. The body is read as JSON whatever its Content-Type.",
		responses: merge(jsonOK("the SMTP server accepted the mail", ref("Empty"), m{}), b.errors(send, true, with(vErr, apierr.NoUnlockKey, apierr.NoUnlockEmail, apierr.MaxAttemptsReached, apierr.SendEmailError)...)),
		body: jsonBody(ref("SendRequest"), m{"app_id": appID, "auth_token": "<auth token>", "email_data": m{
			"subject": "Your code: SERVICE_VERIFICATION_CODE", "to_email": "alice@example.com",
			"text": "Your code is SERVICE_VERIFICATION_CODE", "html": "<p>Code: <b>SERVICE_VERIFICATION_CODE</b></p>"}}, true, "")})
	b.add("/verification/email/code", "post", operation{id: "readVerificationCode", tag: "email verification", summary: "Read a code back (test-mode apps)",
		desc:      "The newest unexpired code of the address, or a new one issued without mail. Test-mode apps only.",
		responses: merge(jsonOK("the code", obj([]string{"verification_code"}, m{"verification_code": ref("VerificationCode")}), m{"verification_code": "12345678"}), b.errors(tanker, true, with(vErr, apierr.AppIsNotTest)...)),
		body:      jsonBody(ref("CodeRequest"), m{"app_id": appID, "auth_token": "<auth token>", "email": "alice@example.com"}, true, "")})
	b.add("/verification/email/verify", "post", operation{id: "verifyCode", tag: "email verification", summary: "Check a code",
		desc:      "Checks the code; a right code is used up, and sending it again (a retry after a lost answer) answers `verification_code_used`, which is not counted as a wrong code. Three wrong codes lock the address for `verification.lock_duration`.",
		responses: merge(jsonOK("the code was right", ref("Empty"), m{}), b.errors(tanker, true, with(vErr, apierr.InvalidVerificationCode, apierr.VerificationCodeExpired, apierr.VerificationCodeUsed, apierr.VerificationCodeNotFound, apierr.TooManyAttempts)...)),
		body:      jsonBody(ref("VerifyRequest"), m{"app_id": appID, "auth_token": "<auth token>", "email": "alice@example.com", "verification_code": "12345678"}, true, "")})

	doc := m{
		"openapi": "3.1.0",
		"info": m{"title": "idvault", "version": "1",
			"summary":     "Fake authentication, reference identity server, email verification and admin API",
			"description": description(),
			"license":     license},
		"servers": list{m{"url": "/", "description": "the idvault server that serves this document"}},
		"tags": list{m{"name": "operations"}, m{"name": "admin", "description": "`Authorization: Bearer <admin token>`. Wrong tokens are counted per client address (shared with the console sign-in): too many within the window (admin.max_wrong_tokens, admin.wrong_token_window) answer `admin_locked` 429 with `Retry-After`, even for the right token, for admin.lock_duration."},
			m{"name": "fake authentication", "description": "`fakeauth.enabled`; test-mode apps only; development and tests only"},
			m{"name": "identity server", "description": "`identity_server.enabled`, for the app `identity_server.app_id`"},
			m{"name": "email verification", "description": "`verification.enabled`"}},
		"paths":      b.paths,
		"components": withSchemas(components(b.examples, appExample), b.schemas),
	}
	return render(doc)
}

// description is the document's introduction, with the catalogue as a table.
func description() string {
	return "Every HTTP interface of one `idvault serve`: operations, the admin API, the fake authentication server, the reference identity server and the email verification API. Interfaces switched off in the configuration answer `feature_not_enabled` (404).\n\n" +
		"Error bodies: the admin API, fake authentication, verification and unknown routes answer `{\"error\": {\"status\", \"code\", \"message\", \"trace_id\"}}` (`trace_id` is the `X-Request-ID` of the answer); the verification send route answers `{\"status\", \"code\", \"message\"}` for apps with `legacy_errors`; the identity server answers `{\"error\": \"<message>\", \"code\": \"<code>\"}` (`error`, the reference's string, for people; `code`, for programs). Any route may answer `not_found` 404 (unknown path), `method_not_allowed` 405 (also for a method that is not HTTP's), `body_too_large` 413, `host_not_allowed` 421 (a Host header outside `server.allowed_hosts`), `malformed_request` 400 (two `Host` headers, or `Content-Length` with `Transfer-Encoding`; the connection is then closed), `request_header_too_large` 431 and `internal_error` 500.\n\n" +
		"Routes marked `x-idvault-any-content-type` read their body as JSON whatever its Content-Type, except that an identity server without a token (and without OIDC) takes only `application/json` (`unsupported_media_type` 415, so that a cross-site form cannot drive it). The identity server accepts the app token or, with `identity_server.oidc` on, an OpenID Connect ID token (security scheme `idToken`); the origins of `identity_server.cors_origins` get CORS preflight answers (OPTIONS, 204) and grants on its routes. The test suite checks every answer its HTTP tests receive against this document (app/apptest/openapi.go).\n\n" +
		catalogueTable(apierr.Catalog)
}

func components(examples, appExample m) m {
	b64 := func(desc string) m { return m{"type": "string", "contentEncoding": "base64", "description": desc} }
	creds := func(more m) m {
		return merge(m{"app_id": m{"type": "string", "description": "the app ID, standard or URL-safe base64, padded or not"}, "auth_token": m{"type": "string"}}, more)
	}
	codes := codeNames(apierr.Catalog)
	mailFields := m{}
	for _, k := range []string{"subject", "to_email", "html", "text", "from_name", "to_name", "reply_to_email", "reply_to_name"} {
		mailFields[k] = m{"type": "string"}
	}
	mailFields["to_email"] = m{"type": "string", "description": "one address at a public domain name: a domain literal (a@[10.0.0.5]), a single-label name (a@localhost), an IP address written as a name or a .localhost name is `invalid_email`"}
	httpStatus := m{"type": "integer", "minimum": 400, "maximum": 599}
	return m{
		"examples": examples,
		"securitySchemes": m{
			"adminToken":          m{"type": "http", "scheme": "bearer", "description": "the admin token (admin.token, or the admin.token file beside the data file)"},
			"identityServerToken": m{"type": "http", "scheme": "bearer", "description": "identity_server.token (the app token): any email, every route"},
			"idToken":             m{"type": "http", "scheme": "bearer", "bearerFormat": "JWT", "description": "an OpenID Connect ID token of identity_server.oidc.issuer for identity_server.oidc.audience (when identity_server.oidc is on): POST and PATCH /identity for its own email claim only, POST /public_identity for any email. A refused token is `invalid_token` 401 with `WWW-Authenticate: Bearer error=\"invalid_token\"`; `email_not_verified` (unverified; with another identity_server.oidc.email_claim than email, also when the email claim does not name the same address) or `no_email_claim` 403; `identity_provider_unavailable` 503 with `Retry-After` while the provider's keys cannot be fetched; a token whose `email` claim has white space or control characters around the address, or whose `exp`, `nbf` or `iat` is not a number, is `invalid_token`. Browsers on identity_server.cors_origins may send it (CORS preflight answered 204)."}},
		"parameters": m{
			"AppID":       m{"name": "app_id", "in": "path", "required": true, "description": "the app ID: URL-safe base64, padded, unpadded or with `%3D` padding, or standard base64 (send `/` as `%2F`)", "schema": ref("AnyAppID"), "example": urlID},
			"AdminAppID":  m{"name": "app_id", "in": "path", "required": true, "description": "the app ID in any base64 form (as for the fake authentication routes)", "schema": ref("AnyAppID"), "example": urlID},
			"Email":       m{"name": "email", "in": "query", "required": true, "description": "the email address, URL-encoded (`+` as `%2B`); exactly once", "schema": m{"type": "string", "minLength": 1}, "example": "alice@example.com"},
			"Emails":      m{"name": "emails", "in": "query", "description": "emails separated by commas (raw or `%2C`); may repeat", "schema": m{"type": "string"}, "example": "alice@example.com,bob@example.com"},
			"EmailInList": m{"name": "email", "in": "query", "description": "more emails, as `emails`", "schema": m{"type": "string"}}},
		"schemas": m{
			"AnyAppID":         m{"type": "string", "pattern": "^[A-Za-z0-9+/_-]{43}=?$", "description": "32 bytes in base64 (standard or URL-safe, padded or not)"},
			"StdAppID":         m{"type": "string", "pattern": "^[A-Za-z0-9+/]{43}=$", "description": "32 bytes in standard padded base64 (as Tanker's dashboard shows it)"},
			"URLAppID":         m{"type": "string", "pattern": "^[A-Za-z0-9_-]{43}$", "description": "32 bytes in URL-safe unpadded base64 (for URLs)"},
			"Identity":         b64("a Tanker identity: base64 of its JSON"),
			"VerificationCode": m{"type": "string", "pattern": "^[0-9]{8}$"},
			"Empty":            m{"type": "object", "maxProperties": 0},
			"ErrorCode":        m{"type": "string", "enum": codes, "description": "a code of the catalogue (app/apierr/catalog.go)"},
			"TankerError": merge(obj([]string{"error"}, m{"error": obj([]string{"status", "code", "message", "trace_id"}, m{
				"status": httpStatus, "code": ref("ErrorCode"), "message": m{"type": "string"}, "trace_id": m{"type": "string", "minLength": 1}})}),
				m{"example": m{"error": m{"status": 404, "code": "app_not_found", "message": apierr.AppNotFound.Message, "trace_id": traceID}}}),
			"FlatError": merge(obj([]string{"status", "code", "message"}, m{"status": httpStatus, "code": ref("ErrorCode"), "message": m{"type": "string"}}),
				m{"example": m{"status": 401, "code": "invalid_auth_token", "message": apierr.InvalidAuthToken.Message}}),
			"SimpleError": merge(obj([]string{"error", "code"}, m{"error": m{"type": "string", "description": "the message, for people (the reference identity server's body)"}, "code": ref("ErrorCode")}),
				m{"example": m{"error": apierr.UnknownUser.Message, "code": apierr.UnknownUser.Name}}),
			"Readiness": obj([]string{"status", "checks", "warnings"}, m{
				"status":   m{"enum": list{"ready", "not_ready"}},
				"checks":   m{"type": "object", "additionalProperties": m{"type": "string"}, "description": "check name to `ok` or `failed: <cause>`"},
				"warnings": m{"type": "array", "items": m{"type": "string"}}}),
			"App": merge(obj([]string{"id", "url_id", "name", "test", "declared", "legacy_errors", "registered_users_only"}, m{
				"id": ref("StdAppID"), "url_id": ref("URLAppID"), "name": m{"type": "string", "minLength": 1, "maxLength": 100},
				"test":                  m{"type": "boolean", "description": "test mode: fake authentication and reading codes back"},
				"declared":              m{"type": "boolean", "description": "declared in the config file (read-only)"},
				"legacy_errors":         m{"type": "boolean"},
				"registered_users_only": m{"type": "boolean"},
				"created_at":            m{"type": "string", "format": "date-time", "description": "absent for declared apps"},
				"updated_at":            m{"type": "string", "format": "date-time", "description": "absent for declared apps"}}), m{"example": appExample}),
			"AppEnvelope": obj([]string{"app"}, m{"app": ref("App")}),
			"CreatedApp": obj([]string{"app", "app_secret", "auth_token"}, m{"app": ref("App"),
				"app_secret": b64("the 64-byte app secret, standard base64 (shown once)"), "auth_token": m{"type": "string", "minLength": 1, "description": "shown once"}}),
			"RotatedToken": obj([]string{"app", "auth_token"}, m{"app": ref("App"), "auth_token": m{"type": "string", "minLength": 1}}),
			"CreateAppRequest": m{"type": "object", "required": list{"name"}, "properties": m{
				"name": m{"type": "string", "minLength": 1, "maxLength": 100}, "test": m{"type": "boolean", "default": false},
				"legacy_errors": m{"type": "boolean", "default": false}, "registered_users_only": m{"type": "boolean", "default": false}}},
			"UpdateAppRequest": obj(nil, m{"legacy_errors": m{"type": "boolean"}, "registered_users_only": m{"type": "boolean"}}),
			"EmailRequest":     m{"type": "object", "required": list{"email"}, "properties": m{"email": m{"type": "string", "minLength": 1}}},
			"SendRequest": m{"type": "object", "required": list{"app_id", "auth_token", "email_data"}, "properties": creds(m{"email_data": m{
				"type": "object", "required": list{"subject", "to_email"}, "properties": mailFields,
				"anyOf": list{m{"required": list{"html"}}, m{"required": list{"text"}}}}})},
			"CodeRequest":   m{"type": "object", "required": list{"app_id", "auth_token", "email"}, "properties": creds(m{"email": m{"type": "string"}})},
			"VerifyRequest": m{"type": "object", "required": list{"app_id", "auth_token", "email", "verification_code"}, "properties": creds(m{"email": m{"type": "string"}, "verification_code": m{"type": "string"}})},
		},
	}
}
