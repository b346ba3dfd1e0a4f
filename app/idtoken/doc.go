// Package idtoken checks OpenID Connect ID tokens for the identity server
// (identity_server.oidc): a client that signed in with the app's provider presents its ID
// token, and the identity server serves the email the token vouches for.
//
// The JOSE work is done by well-kept libraries: github.com/coreos/go-oidc/v3 checks the claims
// (iss exactly identity_server.oidc.issuer, aud holding the audience, the algorithm among
// identity_server.oidc.algorithms, which never include none or HS*), and
// github.com/go-jose/go-jose/v4 parses the token and checks its signature with the provider's
// published keys. This package only fetches and caches those keys (keyset.go), checks exp,
// nbf and iat on the real clock (exp may have passed by identity_server.oidc.clock_skew; nbf
// and iat may be ahead by clock_skew, or go-oidc's 5 minutes when that is longer: go-oidc
// judges exp and nbf at one instant, which charged the skew against nbf, and ignores iat) and reads the email (claims.go).
//
// Choices where the issue was silent:
//
//   - Discovery (issuer + "/.well-known/openid-configuration") is read once, when the first
//     token needs keys; its "issuer" must equal the configured issuer, and its jwks_uri must
//     be https (http only on a loopback address), like the issuer itself. For an issuer off
//     this machine, nothing on it is fetched: a jwks_uri or redirect naming a loopback host is
//     refused, and the default client connects to no loopback or link-local address, nor to an
//     address of this machine's own interfaces unless on the issuer's own host and port
//     (transport.go).
//   - The key set is kept in memory. A token whose kid is unknown (or a token without kid
//     that no cached key verifies) triggers at most one refetch
//     per 10 s (the first one after start at once, so a rotated key works at once). A set is
//     used for the max-age of its Cache-Control (less its Age), bounded by
//     identity_server.oidc.keys_min_age and keys_max_age (1m and 15m by default; no-store or
//     no-cache give the lower bound, no max-age the upper one): from three quarters of that
//     age it is refreshed in the background, past it the refresh is waited for, so a key the
//     provider removed is refused within the age; a set whose refresh fails is kept. After a
//     failed fetch the provider is not asked again for 2 s (the Retry-After of
//     identity_provider_unavailable).
//   - A key is used for a token when its kid matches (any key when the token has no kid), its
//     "use" is absent or "sig", and its "alg", when present, is the token's. Keys of unknown
//     types in the set are skipped.
//   - email_verified may be the boolean true or the string "true" (some providers send a
//     string); anything else, or its absence, counts as not verified.
//   - email_verified speaks only for the standard email claim. With email_claim set to another
//     claim (preferred_username, upn: some providers let users set it to any address), that
//     claim is verified only when email_verified is true and the email claim names the same
//     address after app/address's normalisation (domain case folded, local part as written);
//     otherwise the token is refused as unverified with the reason, and an email_claim value
//     that is not an address as having no email. With require_email_verified false, neither
//     claim is checked.
//   - azp (the authorized party, OpenID Connect Core 1.0 section 3.1.3.7, items 4 and 5, which
//     go-oidc does not check): when present it must be a string equal to
//     identity_server.oidc.audience (the client ID, compared exactly), else the token is
//     invalid ("authorized for another party"); a token whose aud holds several values must
//     carry it (the specification says "should": idvault refuses, so a token minted for another
//     client that merely lists idvault's audience too is not taken). A token for one audience
//     without azp is valid, as most providers mint them.
//   - An access token of the provider is not an ID token, even for our audience and azp (an
//     API the app calls with it could replay it): one whose header typ is at+jwt (RFC 9068,
//     "application/" prefix or not, any case), or whose typ claim is "Bearer" (Keycloak's
//     access tokens; its ID tokens say "ID"), is invalid. Other providers' access tokens carry
//     neither mark and are told apart only by their audience.
//   - exp, nbf and iat must be JSON numbers: "nbf": "1767225600" (a string) is invalid, as is an
//     address claim (email_claim, and email beside it) with white space, control or invisible
//     format characters around the address (" victim@example.com", U+00A0, U+3000, U+200B):
//     neither is trimmed or skipped into meaning what it looks like.
//   - Reasons shown to clients say what was wrong (expired, another audience...) and never
//     hold the token, the subject or the email.
package idtoken
