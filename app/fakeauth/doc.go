// Package fakeauth is the fake authentication server: private, disposable and public
// identities by email, for development and tests only. It hands out private identities
// without any authentication, so it serves only apps in test mode, is off by default in
// production, logs a warning at start and shows one on /readyz when on, and refuses a
// non-loopback listen address unless fakeauth.allow_remote is true.
//
// Routes (the app ID in URL-safe or standard base64, padded, unpadded, or with the padding
// percent-encoded; a standard-base64 '/' must be sent as %2F since it would split the path):
//
//	GET /apps/:app_id/private_identity?email=E            {"private_permanent_identity", "private_provisional_identity"?}
//	GET /apps/:app_id/disposable_private_identity         {"private_permanent_identity"}, a new user each call, never stored
//	GET /apps/:app_id/public_identities?emails=E1,E2      [{"email", "public_identity"}, ...] in request order
//	PUT /apps/:app_id/private_identity?email=E            body empty or {"registered": true}; answers {}
//
// Choices where the issue and the reference are silent:
//
//   - Emails follow package address: trimmed, one bare addr-spec of at most 254 bytes, the
//     domain lower-cased and the local part kept as written. "Alice@Example.COM" and
//     "Alice@example.com" are one record; "alice@example.com" is another.
//   - Query values are decoded as HTML forms are ('+' is a space), the way Go's url.QueryEscape
//     and every Tanker client encode them. Keeping '+' literal would silently turn an encoded
//     " alice@example.com" into the valid, different "+alice@example.com"; instead a raw
//     ?email=me+test@example.com fails with invalid_email and a hint to send '+' as %2B.
//   - A missing or empty email parameter on private_identity (GET or PUT) is invalid_email;
//     so is a repeated one. public_identities takes every emails and email parameter in URL
//     order, each split on commas (raw or %2C); a present but empty parameter is the empty list
//     (answer []), no parameter at all is invalid_email, an empty item inside a list is an
//     invalid email. The list limit (fakeauth.max_emails, default 100) counts positions,
//     repeats included, and is checked before the emails are validated.
//   - invalid_email for a list names the position (1-based) and repeats the offending text,
//     quoted and cut at 80 bytes.
//   - Each answer of public_identities echoes the email as the client sent it (after URL
//     decoding), not its normalised form, so clients can match answers to their input; emails
//     that normalise alike get the same identity.
//   - PUT needs a permanent identity: an email never seen, or seen only by public_identities
//     (a provisional identity is not a user), is user_not_found 404. "registered": false is
//     invalid_body (nothing can be unregistered), and so is "registered" given twice (in any case);
//     other keys are ignored.
//   - Errors are checked in this order: app ID, app exists, app in test mode, then the query and
//     body. An app ID that decodes to other than 32 bytes (e.g. "deadbeef") is invalid_app_id.
package fakeauth
