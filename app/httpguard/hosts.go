// Package httpguard holds the request checks both HTTP servers (idvault serve and idvault
// exit) make before routing: the Host header against DNS rebinding (Hosts) and exact HTTP/1.1
// framing against request smuggling (Framing).
package httpguard

import (
	"net"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

	"github.com/idvault/idvault/app/loopback"
)

// Hosts refuses requests whose Host header is not one the server answers for, with refuse
// (the caller's JSON 421 host_not_allowed naming its config key). This defeats DNS rebinding:
// a web page on attacker.example whose name is made to resolve to 127.0.0.1 still sends
// "Host: attacker.example", so it cannot reach a server on the visitor's loopback. The allowed
// names are the configured ones; when none are, a loopback listen address allows loopback
// names and its own host, any other address allows all.
func Hosts(listen string, allowed []string, refuse func() error) fiber.Handler {
	if len(allowed) == 0 {
		host, _, err := net.SplitHostPort(listen)
		if err != nil || !loopback.IsHost(host) {
			return func(c *fiber.Ctx) error { return c.Next() }
		}
		allowed = []string{"localhost", "*.localhost", "127.0.0.1", "::1", host}
	}
	return func(c *fiber.Ctx) error {
		if !HostAllowed(utils.UnsafeString(c.Request().Host()), allowed) { // not kept: no copy
			return refuse()
		}
		return c.Next()
	}
}

// HostAllowed matches a Host header (port ignored, case-insensitive, trailing dot ignored)
// against the allowed names; "*.example.com" matches any subdomain of example.com.
func HostAllowed(hostHeader string, allowed []string) bool {
	host := hostHeader
	if h, _, err := net.SplitHostPort(hostHeader); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	for _, a := range allowed {
		a = strings.TrimSuffix(strings.ToLower(strings.Trim(a, "[]")), ".")
		if suffix, ok := strings.CutPrefix(a, "*."); ok {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
			continue
		}
		if host == a {
			return true
		}
	}
	return false
}
