// Package address validates and normalises email addresses, the key of every identity record
// and verification code.
//
// The rule: surrounding white space is trimmed; the rest must be one bare RFC 5322 addr-spec
// (no display name, no angle brackets, no comments), at most 254 bytes, with no control
// characters; the domain is lower-cased (but a letter IDNA reads as another domain than its
// lower case, such as "İ", is kept: see foldDomain) and the local part kept as written (RFC 5321
// lets servers treat it case-sensitively). So " Alice@Example.COM " is stored as
// "Alice@example.com", and "alice@example.com" is another address. A domain literal
// ("a@[10.0.0.5]") and a single-label domain ("dev@localhost") are valid addresses (identity
// records may be keyed by them); mail is sent only to addresses Routable accepts.
package address

import (
	"errors"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// MaxLength is the longest address accepted, in bytes (RFC 5321 path limit less the brackets).
const MaxLength = 254

// ErrInvalid is returned for anything that is not a single valid address.
var ErrInvalid = errors.New("address: not a valid email address")

// Normalize returns the normalised form of s, or ErrInvalid.
func Normalize(s string) (string, error) {
	s = strings.TrimSpace(s)
	if n, ok := simple(s); ok {
		return n, nil
	}
	return normalizeFull(s)
}

// normalizeFull is Normalize for any trimmed s, through net/mail.
func normalizeFull(s string) (string, error) {
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
	return local + "@" + foldDomain(domain), nil
}

// foldCase lower-cases a local part, except a non-ASCII letter whose lower case is ASCII: the
// dotted capital I (U+0130) and the Kelvin sign (U+212A), which strings.ToLower turns into "i"
// and "k". A server that accepts Unicode local parts keeps them apart from the ASCII letters,
// so "\u212Aate@x.io" can be another person's mailbox than kate@x.io.
func foldCase(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return strings.Map(func(r rune) rune {
		if l := unicode.ToLower(r); r < utf8.RuneSelf || l >= utf8.RuneSelf {
			return l
		}
		return r
	}, s)
}

// foldDomain lower-cases a domain, except a letter whose lower case IDNA (UTS #46) maps to
// another domain than the letter itself: "İ" is "i̇" to IDNA (xn--ibm-8dc for İbm), not "i";
// "ẞ" is "ss" (strasse), not "ß" (xn--strae-oqa). Lower-cased, "victim@İbm.example" was
// victim@ibm.example, so whoever received mail at the first got the identity of the second.
// Where IDNA agrees (the Kelvin sign and "k", "Ü" and "ü"), the letter is lower-cased.
func foldDomain(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return strings.Map(func(r rune) rune {
		l := unicode.ToLower(r)
		if r < utf8.RuneSelf || l == r {
			return l
		}
		mr, err1 := idna.Lookup.ToUnicode(string(r))
		ml, err2 := idna.Lookup.ToUnicode(string(l))
		if err1 != nil || err2 != nil || mr != ml {
			return r
		}
		return l
	}, s)
}

// simple normalises the common address without net/mail: letters, digits and ._+- in the local
// part (no dot first, last or twice), '@', then dot-separated labels of letters, digits and
// '-'. Every address it accepts, net/mail accepts and round-trips unchanged (checked by
// FuzzSimpleAgrees), so the result is the one the full path gives; anything else returns false
// and takes the full path. A list of 100 emails spent more in net/mail than in its lookups.
func simple(s string) (string, bool) {
	at := strings.IndexByte(s, '@')
	if at <= 0 || at == len(s)-1 || len(s) > MaxLength {
		return "", false
	}
	local, domain := s[:at], s[at+1:]
	if ok, _ := dotted(local, true); !ok {
		return "", false
	}
	ok, upper := dotted(domain, false)
	switch {
	case !ok:
		return "", false
	case upper:
		return local + "@" + strings.ToLower(domain), true
	}
	return s, true
}

// dotted reports whether s is non-empty runs of allowed bytes joined by single dots, and
// whether it has an upper-case letter. One table lookup per byte: a list of 100 emails spent a
// tenth of its time here with a comparison chain.
func dotted(s string, local bool) (ok, upper bool) {
	allowed := byte(inDomain)
	if local {
		allowed = inLocal
	}
	prevDot := true // no dot first
	var seen byte
	for i := 0; i < len(s); i++ {
		k := class[s[i]]
		if k&isDot != 0 {
			if prevDot {
				return false, false
			}
			prevDot = true
			continue
		}
		if k&allowed == 0 {
			return false, false
		}
		seen |= k
		prevDot = false
	}
	return !prevDot, seen&isUpper != 0 // no dot last, not empty
}

// The classes of bytes of a simple address.
const (
	inLocal  = 1 << iota // allowed in the local part: letters, digits, '-', '_', '+'
	inDomain             // allowed in a domain label: letters, digits, '-'
	isDot
	isUpper
)

var class = func() (t [256]byte) {
	for c := range 256 {
		switch {
		case c == '.':
			t[c] = isDot
		case c >= 'A' && c <= 'Z':
			t[c] = inLocal | inDomain | isUpper
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
			t[c] = inLocal | inDomain
		case c == '_' || c == '+':
			t[c] = inLocal
		}
	}
	return t
}()
