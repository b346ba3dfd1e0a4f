package address

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Canonical is the form under which verification codes and send limits are kept: the local
// part lower-cased (never a non-ASCII letter into an ASCII one: see foldCase) and the domain
// lower-cased and punycoded (each non-ASCII label as its "xn--" ASCII form, RFC 3492), so "Victim@Example.com", "victim@example.com" and
// "VICTIM@EXAMPLE.COM" share one code list and one send limit, as do "a@bücher.example" and
// "a@xn--bcher-kva.example". Most mail systems deliver all of these to one mailbox; counting
// them apart would multiply the limits. It applies to a Normalize'd address; identity records
// keep Normalize's form (local part as written).
func Canonical(normalized string) string {
	at := strings.LastIndexByte(normalized, '@')
	if at < 0 {
		return strings.ToLower(normalized)
	}
	return foldCase(normalized[:at]) + "@" + punycodeDomain(foldDomain(normalized[at+1:]))
}

// Deliverable is the address a mail for normalized is sent to: the local part as written and
// the domain as Canonical gives it (ASCII: UTS #46 mapped, non-transitional, punycoded). The
// mail then reaches the domain its code is keyed under; left in Unicode, the domain would be
// mapped again by the SMTP relay, and a relay that maps the deviation characters the old
// (transitional) way sends "a@faß.de" to fass.de, another domain than xn--fa-hia.de. The
// result may not be a valid address (a domain that maps to none: "x.\u200b" to "x."): the
// caller checks it with Normalize.
func Deliverable(normalized string) string {
	_, deliverable := CanonicalAndDeliverable(normalized)
	return deliverable
}

// CanonicalAndDeliverable returns Canonical(normalized) and Deliverable(normalized), computing
// the canonical form once: a verification send keys its code by the first and mails the second.
func CanonicalAndDeliverable(normalized string) (canonical, deliverable string) {
	canonical = Canonical(normalized)
	at := strings.LastIndexByte(normalized, '@')
	if at < 0 {
		return canonical, normalized
	}
	return canonical, normalized[:at] + canonical[strings.LastIndexByte(canonical, '@'):]
}

func punycodeDomain(domain string) string {
	// The UTS #46 mapping the resolvers and mail servers apply to an internationalised domain
	// first: it drops the invisible code points (zero-width space, soft hyphen...) and folds
	// compatibility forms (full-width letters, the ideographic full stop), so that
	// "a@x\u200b.io" and "a@ｘ.io", which a mail server delivers to x.io, are keyed as a@x.io
	// and cannot each open a new send limit. A domain the mapping refuses (a domain literal,
	// an underscore) keeps the label-by-label encoding below.
	if !isASCII(domain) {
		if mapped, err := idna.Lookup.ToASCII(domain); err == nil && mapped != "" {
			return strings.ToLower(mapped)
		}
	}
	labels := strings.Split(domain, ".")
	for i, l := range labels {
		if !isASCII(l) {
			labels[i] = "xn--" + punycode(l)
		}
	}
	return strings.Join(labels, ".")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// The Bootstring parameters of punycode (RFC 3492 section 5).
const (
	punyBase, punyTmin, punyTmax, punySkew, punyDamp = 36, 1, 26, 38, 700
	punyInitialBias, punyInitialN                    = 72, 128
)

// punycode encodes a label with the Bootstring parameters of RFC 3492 section 5.
func punycode(label string) string {
	runes := []rune(label)
	var out []byte
	for _, r := range runes {
		if r < 0x80 {
			out = append(out, byte(r))
		}
	}
	b := len(out)
	h := b
	if b > 0 {
		out = append(out, '-')
	}
	n, delta, bias := punyInitialN, 0, punyInitialBias
	for h < len(runes) {
		m := int(^uint(0) >> 1)
		for _, r := range runes {
			if int(r) >= n && int(r) < m {
				m = int(r)
			}
		}
		delta += (m - n) * (h + 1)
		n = m
		for _, r := range runes {
			if int(r) < n {
				delta++
			}
			if int(r) != n {
				continue
			}
			out = appendPunyDelta(out, delta, bias)
			bias = punyAdapt(delta, h+1, h == b)
			delta = 0
			h++
		}
		delta++
		n++
	}
	return string(out)
}

// appendPunyDelta appends delta as a generalized variable-length integer, whose digit
// thresholds follow bias (RFC 3492 section 6.3).
func appendPunyDelta(out []byte, delta, bias int) []byte {
	q := delta
	for k := punyBase; ; k += punyBase {
		t := k - bias
		if t < punyTmin {
			t = punyTmin
		} else if t > punyTmax {
			t = punyTmax
		}
		if q < t {
			break
		}
		out = append(out, punyDigit(t+(q-t)%(punyBase-t)))
		q = (q - t) / (punyBase - t)
	}
	return append(out, punyDigit(q))
}

// punyDigit is the basic code point of digit d: a to z for 0 to 25, 0 to 9 for 26 to 35.
func punyDigit(d int) byte {
	if d < 26 {
		return byte('a' + d)
	}
	return byte('0' + d - 26)
}

// punyAdapt is the bias after a delta is encoded (RFC 3492 section 6.1): first is the first
// delta of the label, numPoints the number of code points encoded so far.
func punyAdapt(delta, numPoints int, first bool) int {
	if first {
		delta /= punyDamp
	} else {
		delta /= 2
	}
	delta += delta / numPoints
	k := 0
	for delta > ((punyBase-punyTmin)*punyTmax)/2 {
		delta /= punyBase - punyTmin
		k += punyBase
	}
	return k + (punyBase-punyTmin+1)*delta/(delta+punySkew)
}

// Routable reports whether addr, an address as Deliverable gives it (ASCII domain), is at a
// domain name an SMTP relay looks up in the public DNS: not a domain literal ("a@[10.0.0.5]",
// "a@[IPv6:::1]", which a relay delivers to that IP address), and a name of at least two
// labels whose last one begins with a letter, as every top-level domain does, and is not
// "localhost" (RFC 6761: it and its subdomains are loopback). So a single-label name the relay
// resolves on its own network ("a@localhost", "a@intranet") and an IP address written as a
// name ("a@127.0.0.1", "a@0x7f.1") are refused. Names under a private domain of the relay's
// network (corp.example.com) cannot be told apart here: the relay's own policy covers them.
func Routable(addr string) bool {
	at := strings.LastIndexByte(addr, '@')
	if at < 0 {
		return false
	}
	domain := strings.ToLower(addr[at+1:])
	dot := strings.LastIndexByte(domain, '.')
	if strings.HasPrefix(domain, "[") || dot <= 0 || dot == len(domain)-1 {
		return false
	}
	tld := domain[dot+1:]
	return tld[0] >= 'a' && tld[0] <= 'z' && tld != "localhost"
}
