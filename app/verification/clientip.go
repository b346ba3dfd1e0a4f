package verification

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"

	"idvault/app/config"
)

// proxies are the trusted proxies (config server.trusted_proxies).
type proxies []netip.Prefix

func parseProxies(list []string) (proxies, error) {
	out := make(proxies, 0, len(list))
	for i, s := range list {
		p, err := config.ParseProxy(s)
		if err != nil {
			return nil, fmt.Errorf("verification: server.trusted_proxies[%d]: %w", i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (ps proxies) trusted(a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// clientIP is the address the per-IP send limit applies to: the TCP peer, or, when the peer is a
// trusted proxy, the right-most address of X-Forwarded-For that is not a trusted proxy (the
// addresses left of it were written by the client and prove nothing). When every address is a
// trusted proxy, the left-most one is used; an entry that does not parse stops the walk at the
// last address that did.
func (ps proxies) clientIP(c *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if !peer.IsValid() || !ps.trusted(peer) {
		return peer
	}
	client := peer
	headers := c.Request().Header.PeekAll(fiber.HeaderXForwardedFor)
	var hops []string
	for _, h := range headers {
		hops = append(hops, strings.Split(string(h), ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			return client
		}
		client = a.Unmap()
		if !ps.trusted(client) {
			return client
		}
	}
	return client
}
