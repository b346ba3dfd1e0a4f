package idtoken

import (
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/idvault/idvault/app/address"
)

// emailOf reads the email of a verified token's claims: claim (identity_server.oidc.email_claim)
// must be a non-empty string, and, when required, email_verified must be true (the JSON
// boolean, or the string "true" that some providers send).
//
// email_verified speaks for the standard email claim only (OpenID Connect Core 5.1). When claim
// is another one (preferred_username, upn...: some providers let users change it to any
// address), the token's email counts as verified only when email_verified is true and the email
// claim names the same address after normalisation (app/address: domain case folded, local
// part as written); else the token is refused as unverified, saying why.
//
// An address claim with white space or control characters around it (" victim@example.com",
// "victim@example.com\t", U+00A0, U+3000, a zero-width space) is not the address it looks
// like: the token is invalid, rather than trimmed and matched to that address's record.
func emailOf(claims map[string]json.RawMessage, claim string, requireVerified bool) (string, error) {
	email, ok := stringClaim(claims, claim)
	if !ok {
		return "", &Refusal{Kind: ErrNoEmail, Reason: "the ID token has no " + claim + " claim (identity_server.oidc.email_claim)"}
	}
	if padded(email) {
		return "", paddedRefusal(claim)
	}
	if !requireVerified {
		return email, nil
	}
	if !verified(claims["email_verified"]) {
		return "", &Refusal{Kind: ErrUnverified, Reason: "the ID token's email is not verified (email_verified is not true)"}
	}
	if claim == "email" {
		return email, nil
	}
	normalized, err := address.Normalize(email)
	if err != nil {
		return "", &Refusal{Kind: ErrNoEmail, Reason: "the ID token's " + claim + " claim (identity_server.oidc.email_claim) is not a valid address"}
	}
	standard, ok := stringClaim(claims, "email")
	if !ok {
		return "", &Refusal{Kind: ErrUnverified, Reason: "the ID token's " + claim + " claim is not verified: email_verified speaks only for the email claim, and the token has none"}
	}
	if padded(standard) {
		return "", paddedRefusal("email")
	}
	n, err := address.Normalize(standard)
	if err != nil {
		return "", &Refusal{Kind: ErrUnverified, Reason: "the ID token's " + claim + " claim is not verified: email_verified speaks only for the email claim, which is not a valid address"}
	}
	if n != normalized {
		return "", &Refusal{Kind: ErrUnverified, Reason: "the ID token's " + claim + " claim is not verified: email_verified speaks only for the email claim, which names another address"}
	}
	return email, nil
}

// padded reports whether s begins or ends with white space (Unicode's, U+00A0 and U+3000
// included), a control character or an invisible format character (U+200B, U+FEFF).
func padded(s string) bool {
	first, _ := utf8.DecodeRuneInString(s)
	last, _ := utf8.DecodeLastRuneInString(s)
	return invisible(first) || invisible(last)
}

func invisible(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == utf8.RuneError
}

func paddedRefusal(claim string) *Refusal {
	return &Refusal{Kind: ErrInvalid, Reason: "the " + claim + " claim has white space or control characters around the address"}
}

// stringClaim reads a claim that must be a string with something besides white space.
func stringClaim(claims map[string]json.RawMessage, name string) (string, bool) {
	var s string
	raw, ok := claims[name]
	if !ok || json.Unmarshal(raw, &s) != nil || strings.TrimSpace(s) == "" {
		return "", false
	}
	return s, true
}

// verified reads email_verified: true or "true" (any case); anything else, or absent, is false.
func verified(raw json.RawMessage) bool {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		return b
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.EqualFold(s, "true")
}
