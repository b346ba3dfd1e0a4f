// Package idserver is the reference identity server: permanent identities by email, public
// identities with provisional fallback, and registration, for one app
// (identity_server.app_id). An application's backend calls it after authenticating its user,
// with the app token; or, with identity_server.oidc on, the client itself calls it with its
// OpenID Connect ID token (checked by package idtoken): POST and PATCH /identity then serve only
// the token's own email (403 forbidden otherwise), POST /public_identity any email; the
// origins of identity_server.cors_origins may call it from a browser (cors.go).
//
//	POST  /identity         {"email"} → {"id", "serviceIdentity", "provisionalIdentity"?, "registered"}
//	PATCH /identity         {"email"} → 200 text/plain "OK" (registered=true)
//	POST  /public_identity  {"email"} → {"publicIdentity"}
//
// Errors are {"error": "<message>", "code": "<code>"}: error is the reference's string, code the
// catalogue's name (app/apierr), for programs: 400 no_email_provided, invalid_email,
// unknown_user; 401 unauthorized; with an ID token 401 invalid_token, 403 forbidden,
// email_not_verified, no_email_claim, 503 identity_provider_unavailable (with Retry-After);
// 503 identity_server_app_unavailable when the configured app does not exist; 500
// internal_error for anything unexpected (logged with the request ID, never with an email or
// an identity). The guide for browsers and providers is app/idtoken/OIDC.md.
//
// Records are shared with the fake authentication server (package directory): one record per
// (app, normalised email), so one email has one permanent identity under both interfaces.
//
// Choices where TankerHQ/identity-server and the issue are silent, or where it was fixed:
//
//   - A permanent identity is never dropped: POST /public_identity for an unregistered user
//     without a provisional identity creates one beside the permanent identity (the reference
//     replaced the whole record, so the next POST /identity minted a new user).
//   - PATCH needs a permanent identity: an email with only a provisional identity is "unknown
//     user" too (nobody can have registered with an identity never handed out), so
//     "registered" always implies a permanent identity. The reference's misspelled
//     "unkwnown user" is corrected to "unknown user".
//   - The body is parsed as JSON whatever its Content-Type. Not a JSON object (malformed, an
//     array, null), an email missing, null, non-string or blank: "no email provided". The input
//     is checked before the app, so bad input never gets a 5xx.
//   - The secret permanent identity is returned as "serviceIdentity", and again as
//     "tankerIdentity" (the reference's name, so that its clients work unchanged);
//     "provisionalIdentity" only when one exists.
//   - With an ID token, the order of checks is: the token (401 invalid_token, 403
//     email_not_verified or no_email_claim, 503 identity_provider_unavailable), the body (400),
//     the token's email against the body's (403 forbidden), then the app (503). A refused
//     token's reason is shown to the client; the token, its subject and its email are never
//     logged. With OIDC on there is no tokenless mode: every request needs a credential.
//   - With identity_server.token set, the token is checked before anything else, compared as
//     SHA-256 digests in constant time; a failure adds WWW-Authenticate: Bearer.
//   - The app is looked up per request, so an app created after start is served at once; while
//     it is missing, requests get 503 and /readyz reports the identity_server_app check failed.
//   - Emails are normalised as in package address (trimmed, domain lower-cased, local part
//     kept), the same rule as the fake authentication server.
//   - A 200 means the record is committed to the bbolt file (each creation is one fsynced write
//     transaction); concurrent POST /identity for one new email all return the one identity
//     whose transaction committed first.
package idserver
