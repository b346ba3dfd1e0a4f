package loopback

import (
	"net/netip"
	"strings"
)

// IsHost reports whether host names this machine only: "localhost" in any case, with or
// without the trailing dot of a fully qualified name ("LOCALHOST", "localhost."), or a loopback
// IP literal (127.0.0.0/8, ::1, an IPv4-mapped ::ffff:127.x.y.z, with an IPv6 zone or not), bare
// or inside one pair of brackets ("[::1]", as in a URL or an SMTP address literal). Anything else
// is not loopback: an empty host (every interface), a name under localhost ("a.localhost", which
// only some resolvers keep on this machine), unmatched brackets or surrounding spaces.
func IsHost(host string) bool {
	if inner, ok := strings.CutPrefix(host, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return false
		}
		ip, err := netip.ParseAddr(inner)
		return err == nil && ip.IsLoopback()
	}
	if strings.EqualFold(strings.TrimSuffix(host, "."), "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
