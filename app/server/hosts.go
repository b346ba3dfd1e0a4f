package server

import (
	"net"
	"strings"

	"github.com/gofiber/fiber/v2"

	"idvault/app/apierr"
	"idvault/app/config"
)

// hostGuard refuses requests whose Host header is not one the server answers for, with a JSON
// 421 host_not_allowed. This defeats DNS rebinding: a web page on attacker.example whose name
// is made to resolve to 127.0.0.1 still sends "Host: attacker.example", so it cannot reach a
// server on the visitor's loopback. The allowed names are server.allowed_hosts; when empty, a
// loopback listen address allows loopback names and its own host, any other address allows all.
func hostGuard(cfg config.Server) fiber.Handler {
	allowed := cfg.AllowedHosts
	if len(allowed) == 0 {
		host, _, err := net.SplitHostPort(cfg.Listen)
		if err != nil || !config.IsLoopback(host) {
			return func(c *fiber.Ctx) error { return c.Next() }
		}
		allowed = []string{"localhost", "*.localhost", "127.0.0.1", "::1", host}
	}
	return func(c *fiber.Ctx) error {
		if !hostAllowed(string(c.Request().Host()), allowed) {
			return apierr.HostNotAllowed.New()
		}
		return c.Next()
	}
}

// hostAllowed matches a Host header (port ignored, case-insensitive, trailing dot ignored)
// against the allowed names; "*.example.com" matches any subdomain of example.com.
func hostAllowed(hostHeader string, allowed []string) bool {
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
