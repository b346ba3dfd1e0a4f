package idtoken

import (
	"encoding/json"
	"strings"
)

// emailOf reads the email of a verified token's claims: claim (identity_server.oidc.email_claim)
// must be a non-empty string, and, when required, email_verified must be true (the JSON
// boolean, or the string "true" that some providers send).
func emailOf(claims map[string]json.RawMessage, claim string, requireVerified bool) (string, error) {
	var email string
	if raw, ok := claims[claim]; !ok || json.Unmarshal(raw, &email) != nil || strings.TrimSpace(email) == "" {
		return "", &Refusal{Kind: ErrNoEmail, Reason: "the ID token has no " + claim + " claim (identity_server.oidc.email_claim)"}
	}
	if requireVerified && !verified(claims["email_verified"]) {
		return "", &Refusal{Kind: ErrUnverified, Reason: "the ID token's email is not verified (email_verified is not true)"}
	}
	return email, nil
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
