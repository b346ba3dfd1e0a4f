// Package verification is the email verification API (interface D): an app's backend asks
// idvault to mail a one-time code inside the subject, html and text the app wrote; idvault
// generates the code, sends the mail over SMTP (package mail) and later checks the code. Test-mode
// apps can read codes back. Routes (registered in app/server/routes.go, switched by
// verification.enabled):
//
//	POST /verification/email         {"app_id", "auth_token", "email_data": {...}}    -> 200 {}
//	POST /verification/email/code    {"app_id", "auth_token", "email"}                 -> 200 {"verification_code": "12345678"}
//	POST /verification/email/verify  {"app_id", "auth_token", "email", "verification_code"} -> 200 {}
//
// email_data: subject (required), to_email (required), html and/or text (at least one), from_name,
// to_name, reply_to_email, reply_to_name (requires reply_to_email). The mail is From
// "from_name <mail.from>" (mail.from_name when from_name is absent), To "to_name <to_email>",
// with Reply-To when given; multipart/alternative when both bodies are given.
//
// # Rules where the issue is silent
//
// Request bodies. app_id is standard or URL-safe base64, padded or not (apps.ParseID); a missing,
// non-string or undecodable app_id is invalid_body, a well-formed unknown one app_not_found. A
// field of the wrong JSON type is invalid_body naming the field; unknown fields are ignored, even
// repeated, but a field the route reads given twice (in any case, at the top or in email_data)
// is invalid_body "<key> is given twice" (encoding/json would keep the last value silently).
// Optional string fields that are empty count as absent. Checks run in this order: JSON syntax,
// field types, credentials (app_not_found, invalid_auth_token), the fields (invalid_body,
// invalid_email), registered_users_only, throttles, then the send. Addresses are normalised with
// app/address (trimmed, domain lower-cased); codes, the wrong-code lock and the per-address send
// limit are keyed by its canonical form (address.Canonical: local part lower-cased, never a
// non-ASCII letter into an ASCII one, domain IDNA-mapped (UTS #46 non-transitional, which drops
// invisible code points and folds full-width forms) and punycoded), so Victim@x.io and victim@x.io
// share one code list and one limit. The mail goes to the local part as written at that canonical
// domain (address.Deliverable: a@faß.de is mailed to a@xn--fa-hia.de), so the relay cannot map the
// domain to another one (the old, transitional mapping sends faß.de to fass.de); an address whose
// domain maps to no valid domain is invalid_email. A non-ASCII local part (of to_email or
// reply_to_email) is mailed only through an SMTP server that offers SMTPUTF8; otherwise nothing
// is sent and the answer is send_email_error at stage "message" (its count is kept, like a 5xx
// refusal's). to_email must also be at a public domain name (address.Routable): a domain literal (a@[10.0.0.5]), a single-label name (a@localhost,
// a@intranet), an IP address written as a name (a@127.0.0.1) or a .localhost name is
// invalid_email, since the SMTP relay would deliver it to a host inside its own network. There is
// no exception for test-mode apps nor a setting: a local mail catcher such as MailDev takes any
// domain, so development uses names like alice@example.com. reply_to_email is only a header (the
// relay does not deliver to it) and keeps the plain address rule, as do /code and /verify (no
// code is ever issued for such an address); its domain is written in the header as
// address.Deliverable gives it (punycoded). A failed send that never reached a working SMTP
// server gives back its address, app and client-IP counts (not one that may have been
// delivered: see below).
// Subject and names must be one line without control characters (subject at most 998 bytes,
// names 256), so nobody can inject headers.
//
// Placeholder. SERVICE_VERIFICATION_CODE, plus the aliases of verification.placeholders. html,
// when given, must contain one of them, and so must text; the subject may. Every occurrence in
// subject, html and text is replaced (longest name first, so an alias inside another is not
// replaced half-way).
//
// Valid HTML. html is run through the golang.org/x/net/html tokenizer and must: be consumed to
// the last byte (no tag or quoted attribute cut off by the end); have no bare '<' in text outside
// script, style, title and the like (write &lt;); have comments of the form <!-- ... -->
// (Outlook's conditional comments pass); use known HTML element names, or names with '-' or ':'
// (custom and namespaced elements such as <o:p>); and nest: every end tag closes the innermost
// open element of its name, and the elements it implicitly closes, like every element left open
// at the end, must be ones whose end tag HTML lets you omit (p, li, td, tr, html, body...). Void
// elements (br, img...) take no end tag. A full document and a fragment are both accepted.
// Attributes and entities are not checked. The error names the problem and at most a tag name.
//
// Codes. 8 decimal digits, drawn uniformly from crypto/rand by rejection sampling (a 32-bit value
// at or above 42*10^8 is drawn again; the rest are taken mod 10^8). A code is valid for
// verification.code_ttl and used once. An address keeps its 3 newest codes (expired or not):
// issuing a fourth deletes the oldest, so a resend does not break a slow first mail. All apps
// store HMAC-SHA256(key, app ID, address, code) with the key derived from the master key
// ("verification code hmac"); MACs are compared in constant time. Test-mode apps also keep the
// code sealed (XChaCha20-Poly1305 under the master key, bound to its bbolt key) so /code can return
// it. A code whose mail failed is withdrawn before send_email_error is answered. The store keys
// codes by a SHA-256 of the address, never the address in clear.
//
// /code (test-mode apps only) returns the newest unexpired code of the address that was kept in
// clear, or issues a new one without sending mail (not throttled; registered_users_only does not
// apply: it is a test helper).
//
// /verify matches the code against every unexpired code of the address. In one store transaction:
// while the address is locked, too_many_attempts (even for the right code); a match uses the code
// up and clears the wrong-code count; a code that matches only an expired code is
// verification_code_expired (expired codes are kept code_ttl after expiry to say so, then swept);
// a code that matches one already used up is verification_code_used (409: a client retrying
// after a lost answer is told so, rather than charged a wrong code; used codes are remembered,
// as their MAC only, until the same sweep); when the address has no pending code (never sent,
// all used, or swept), verification_code_not_found; anything else is invalid_verification_code
// and counts as a wrong code. Neither expired, used nor not_found counts. Surrounding spaces of
// the code are ignored.
//
// # Throttling
//
// All state is in bbolt (survives restarts), keyed by app so that deleting an app deletes it.
//   - Wrong codes: verification.max_wrong_attempts wrong codes for one (app, address) lock it for
//     lock_duration: /verify answers too_many_attempts and sends answer max_attempts_reached. The
//     count restarts on a success, when the lock ends, and after lock_duration without a wrong
//     code.
//   - Sends per (app, address) and per app: at most address_send_limit (app_send_limit) sends in a
//     window of address_send_window (app_send_window) that opens at the first send after the
//     previous window closed. (So across a window boundary up to twice the limit can pass within
//     one window length; the state is one small counter however large the limit.)
//   - Sends per (app, client IP): a token bucket of ip_burst tokens refilled at ip_rate per second.
//     The client IP is the TCP peer; only when the peer is in server.trusted_proxies is
//     X-Forwarded-For read, right to left, and the first address that is not a trusted proxy is
//     the client (the ones left of it were written by the client); an entry may carry a port
//     (203.0.113.5:41234), as some load balancers write it.
//
// A send passes all throttles or consumes none; a refusal is 429 max_attempts_reached with a
// Retry-After header (seconds) and the wait in the message; the longest wait is reported when
// several refuse. When the SMTP server then fails, the counts are given back only if the mail
// never reached a working server (connect, TLS, AUTH, timeout, a 4xx reply); a 5xx refusal
// keeps them (refundable in send.go). A timeout or a lost connection after the whole mail was
// out (the final "." of DATA sent, its reply missing: mail.SendError.MaybeDelivered) keeps them
// too, and the code is not withdrawn: the server may have taken the mail, and its code may
// reach the user; send_email_error says it may still arrive.
//
// Time comes from the store's clock (store.SetClock in tests), which decides expiry, windows and
// locks. A sweeper (RunSweeper, every minute under `idvault serve`) deletes codes past their
// retention, following a per-app expiry index, and throttle entries that hold nothing any more.
//
// # Errors and logs
//
// Errors are the apierr catalogue in the {"error": {status, code, message, trace_id}} body; apps
// with the legacy_errors option get the flat {status, code, message} body on the send route (and
// their reply_to_* fields are ignored; a body too malformed to name its app gets the standard
// body). send_email_error names the SMTP stage that failed (connect, tls, auth, mail_from,
// rcpt_to, data, timeout...) and the reply code. Nothing here logs or puts in
// an error a code, an auth token, a subject or a body.
//
// Metrics: idvault_verification_sends_total, idvault_verification_send_failures_total{stage},
// idvault_verification_throttled_total{reason=locked|address|app|ip},
// idvault_verification_verifies_total{result=ok|wrong|expired|not_found|locked}.
package verification
