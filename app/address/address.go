// Package address validates and normalises email addresses, the key of every identity record
// and verification code.
//
// The rule: surrounding white space is trimmed; the rest must be one bare RFC 5322 addr-spec
// (no display name, no angle brackets, no comments), at most 254 bytes, with no control
// characters; the domain is lower-cased and the local part kept as written (RFC 5321 lets
// servers treat it case-sensitively). So " Alice@Example.COM " is stored as
// "Alice@example.com", and "alice@example.com" is another address.
package address

import (
	"errors"
	"net/mail"
	"strings"
	"unicode"
)

// MaxLength is the longest address accepted, in bytes (RFC 5321 path limit less the brackets).
const MaxLength = 254

// ErrInvalid is returned for anything that is not a single valid address.
var ErrInvalid = errors.New("address: not a valid email address")

// Normalize returns the normalised form of s, or ErrInvalid.
func Normalize(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > MaxLength || strings.ContainsAny(s, "<>(),;") {
		return "", ErrInvalid
	}
	for _, r := range s {
		if unicode.IsControl(r) || unicode.IsSpace(r) && !strings.Contains(s, `"`) {
			return "", ErrInvalid
		}
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" {
		return "", ErrInvalid
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at <= 0 || at == len(a.Address)-1 {
		return "", ErrInvalid
	}
	local, domain := a.Address[:at], a.Address[at+1:]
	// ParseAddress accepts some forms it then rewrites (quoted local parts that need no quotes);
	// only an address that round-trips unchanged is accepted, so what is stored is what was sent.
	if a.Address != s {
		return "", ErrInvalid
	}
	return local + "@" + strings.ToLower(domain), nil
}
