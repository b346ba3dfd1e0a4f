package address

import (
	"net"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Victim@Example.com":      "victim@example.com",
		"VICTIM@EXAMPLE.COM":      "victim@example.com",
		"a@bücher.example":        "a@xn--bcher-kva.example",
		"a@BÜCHER.example":        "a@xn--bcher-kva.example",
		"a@xn--bcher-kva.example": "a@xn--bcher-kva.example",
		"x@münchen.de":            "x@xn--mnchen-3ya.de",
		"u@例え.テスト":                "u@xn--r8jz45g.xn--zckzah", // RFC 3492 / IANA test names
		"Ünïcode@example.org":     "ünïcode@example.org",
		// What a mail server's IDNA mapping (UTS #46) delivers to x.io is keyed as x.io:
		// invisible code points dropped, full-width forms and the ideographic full stop folded.
		"a@x.io\u200b":     "a@x.io",
		"a@x\u00ad.io":     "a@x.io",
		"a@x\u2060.io":     "a@x.io",
		"a@ｘ.ｉｏ":           "a@x.io",
		"a@x\u3002io":      "a@x.io",
		"a@FAß.de":         "a@xn--fa-hia.de",
		"a@[127.0.0.1]":    "a@[127.0.0.1]",
		"a@under_score.io": "a@under_score.io",
		// Case folds, but a non-ASCII letter never becomes an ASCII one (the Kelvin sign is not
		// "k", the dotted capital I not "i"): those can be other people's mailboxes.
		"\u212Aate@x.io":          "\u212Aate@x.io",
		"V\u0130ctor@x.io":        "v\u0130ctor@x.io",
		"\u00dcber\u03a3@x.io":    "\u00fcber\u03c3@x.io",
		"victim@\u0130bm.example": "victim@xn--ibm-8dc.example", // IDNA: i̇bm, not ibm
		"a@\u212Aey.com":          "a@key.com",                  // IDNA maps the Kelvin sign to k
	} {
		require.Equal(t, want, Canonical(in), in)
	}
}

// Deliverable keeps the local part as written and gives the domain of Canonical.
func TestDeliverable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Victim@faß.de":      "Victim@xn--fa-hia.de",
		"Zoë@BÜCHER.example": "Zoë@xn--bcher-kva.example",
		"a@x.io\u200b":       "a@x.io",
		"a@ｘ.ｉｏ":             "a@x.io",
		"Plain@example.com":  "Plain@example.com",
		`"a@b"@example.com`:  `"a@b"@example.com`,
		"a@[127.0.0.1]":      "a@[127.0.0.1]",
		"a@under_score.io":   "a@under_score.io",
	} {
		require.Equal(t, want, Deliverable(in), in)
	}
}

// Canonical is idempotent, yields an ASCII domain, and never panics on any normalised address.
// Deliverable keeps the address valid, under the same canonical form; CanonicalAndDeliverable
// gives both at once.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{"Victim@Example.com", "a@bücher.example", "u@例え.テスト", "x@xn--mnchen-3ya.de", "a@b", "ü@ü.ü", "Victim@faß.de", "a@x＠y.io", "a@℀.io", "a@x.io\u200b", "\u212Aate@x.io", "v\u0130ctor@x.io"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			return
		}
		c := Canonical(n)
		if Canonical(c) != c {
			t.Fatalf("not idempotent: %q -> %q -> %q", n, c, Canonical(c))
		}
		domain := c[strings.LastIndexByte(c, '@')+1:]
		if !isASCII(domain) {
			t.Fatalf("domain not ASCII: %q", c)
		}
		if local, clocal := n[:strings.LastIndexByte(n, '@')], c[:strings.LastIndexByte(c, '@')]; len([]rune(local)) != len([]rune(clocal)) ||
			strings.Count(strings.Map(asciiOnly, local), "") != strings.Count(strings.Map(asciiOnly, clocal), "") {
			t.Fatalf("the local part of %q changed its ASCII letters: %q", n, c)
		}
		// Deliverable is a valid address under the same canonical form, or not valid at all
		// (a domain that maps to none, such as "0.\u200b" to "0."; the send refuses it).
		d := Deliverable(n)
		if cc, dd := CanonicalAndDeliverable(n); cc != c || dd != d {
			t.Fatalf("CanonicalAndDeliverable(%q) = %q, %q; want %q, %q", n, cc, dd, c, d)
		}
		if nd, err := Normalize(d); err == nil && (nd != d || Canonical(d) != c) {
			t.Fatalf("Deliverable(%q) = %q: normalised %q (%v), canonical %q, want %q", n, d, nd, err, Canonical(d), c)
		}
	})
}

// asciiOnly keeps the ASCII runes of a string (strings.Map).
func asciiOnly(r rune) rune {
	if r < 0x80 {
		return r
	}
	return -1
}

// Routable: only public domain names; a domain literal, a single-label name, an IP address
// written as a name and a .localhost name would be resolved by the relay on its own network.
func TestRoutable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]bool{
		"alice@example.com":       true,
		"a@sub.example.org":       true,
		"a@xn--bcher-kva.example": true,
		"a@x.io":                  true,
		"a@example.COM":           true,
		"a@[10.0.0.5]":            false,
		"a@[IPv6:::1]":            false,
		"a@[example.com]":         false,
		"a@localhost":             false,
		"a@intranet":              false,
		"a@LOCALHOST":             false,
		"a@app.localhost":         false,
		"a@127.0.0.1":             false,
		"a@10.0.0.5":              false,
		"a@0x7f.1":                false,
		"a@1.0x1":                 false,
		"a@example.com.":          false,
		"a@.com":                  false,
		"a@":                      false,
		"no-at":                   false,
		`"a@b"@intranet`:          false,
		`"a@b.c"@example.com`:     true,
		Deliverable("a@ｌｏｃａｌｈｏｓｔ"):      false,
		Deliverable("a@127。0。0。1"):      false,
		Deliverable("a@bücher.example"): true,
	} {
		require.Equal(t, want, Routable(in), "%q", in)
	}
}

// A routable address never names a host by IP address, a single label or a .localhost name,
// however it was spelled (full-width forms, ideographic full stops, invisible code points).
func FuzzRoutable(f *testing.F) {
	for _, s := range []string{"a@example.com", "a@[10.0.0.5]", "a@localhost", "a@127.0.0.1", "a@ｌｏｃａｌｈｏｓｔ", "a@127。0。0。1", "a@x.localhost\u200b", "a@0x7f.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := Normalize(s)
		if err != nil {
			return
		}
		d := Deliverable(n)
		if !Routable(d) {
			return
		}
		domain := strings.ToLower(d[strings.LastIndexByte(d, '@')+1:])
		require.NotContains(t, domain, "[", "%q", s)
		require.Contains(t, domain, ".", "%q", s)
		require.Nil(t, net.ParseIP(domain), "%q", s)
		require.False(t, domain == "localhost" || strings.HasSuffix(domain, ".localhost"), "%q", s)
	})
}
