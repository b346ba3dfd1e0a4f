// Package httpguard holds the request checks both HTTP servers (idvault serve and idvault
// exit) make before routing: the Host header against DNS rebinding (HostCheck) and exact
// HTTP/1.1 framing against request smuggling (FramingOf), and, for the exit server on net/http,
// the listener that makes them on each request head before net/http reads it (Heads). It uses
// the standard library only; the main server's fiber side is app/httpguard/fiberguard.
package httpguard

import (
	"net"
	"slices"
	"strings"

	"github.com/idvault/idvault/app/loopback"
)

// HostCheck answers whether a Host header is one the server answers for, or is nil when every
// one is; a middleware of the caller's refuses the others (each server's JSON 421
// host_not_allowed naming its config key). This defeats DNS rebinding: a web page on
// attacker.example whose name is made to resolve to 127.0.0.1 still sends
// "Host: attacker.example", so it cannot reach a server on the visitor's loopback. The allowed
// names are the configured ones; when none are, a loopback listen address allows loopback
// names and its own host, any other address allows all. The allowed names are normalized once,
// here.
func HostCheck(listen string, allowed []string) func(hostHeader string) bool {
	if len(allowed) == 0 {
		host, _, err := net.SplitHostPort(listen)
		if err != nil || !loopback.IsHost(host) {
			return nil
		}
		allowed = []string{"localhost", "*.localhost", "127.0.0.1", "::1", host}
	}
	p := newHostPatterns(allowed)
	return p.match
}

// HostAllowed matches a Host header (port ignored, case-insensitive, trailing dot ignored)
// against the allowed names; "*.example.com" matches any subdomain of example.com.
func HostAllowed(hostHeader string, allowed []string) bool {
	return newHostPatterns(allowed).match(hostHeader)
}

// hostPatterns are allowed names, normalized: exact names, and the suffixes (".example.com")
// of the wildcard ones.
type hostPatterns struct {
	exact, suffixes []string
}

func newHostPatterns(allowed []string) hostPatterns {
	var p hostPatterns
	for _, a := range allowed {
		a = normalHost(a)
		if suffix, ok := strings.CutPrefix(a, "*."); ok {
			p.suffixes = append(p.suffixes, "."+suffix)
		} else {
			p.exact = append(p.exact, a)
		}
	}
	return p
}

// normalHost is a host name as matched: lower case, without IPv6 brackets or a trailing dot.
func normalHost(h string) string {
	return strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
}

func (p hostPatterns) match(hostHeader string) bool {
	host := hostHeader
	if h, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = h
	}
	host = normalHost(host)
	if host == "" {
		return false
	}
	return slices.Contains(p.exact, host) || slices.ContainsFunc(p.suffixes, func(s string) bool { return strings.HasSuffix(host, s) })
}
