// Package clientip finds the address of the client behind a request, believing
// X-Forwarded-For only from the trusted proxies (server.trusted_proxies). Every per-client limit
// of idvault (verification sends, wrong admin tokens) counts by this address, so a client is the
// same client everywhere.
package clientip

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/idvault/idvault/app/config"
)

// Proxies are the trusted proxies: the peers whose X-Forwarded-For is believed.
type Proxies []netip.Prefix

// Parse parses server.trusted_proxies (IP addresses or CIDR prefixes).
func Parse(list []string) (Proxies, error) {
	out := make(Proxies, 0, len(list))
	for i, s := range list {
		p, err := config.ParseProxy(s)
		if err != nil {
			return nil, fmt.Errorf("server.trusted_proxies[%d]: %w", i, err)
		}
		out = append(out, p)
	}
	return out, nil
}

// ParseValid parses the entries of server.trusted_proxies that parse and skips the others (the
// config's validation reports those before anything starts).
func ParseValid(list []string) Proxies {
	out := make(Proxies, 0, len(list))
	for _, s := range list {
		if p, err := config.ParseProxy(s); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Trusted reports whether a is a trusted proxy.
func (ps Proxies) Trusted(a netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// Of is the client of c: the TCP peer, or, when the peer is a trusted proxy, the right-most
// address of X-Forwarded-For that is not a trusted proxy (the addresses left of it were
// written by the client and prove nothing). When every address is a trusted proxy, the
// left-most one is used; an entry that does not parse stops the walk at the last address that
// did. An entry may carry a port (203.0.113.5:41234, [2001:db8::1]:443), as some load balancers
// write it. IPv4-mapped IPv6 addresses are returned as IPv4.
func (ps Proxies) Of(c *fiber.Ctx) netip.Addr {
	peer, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	peer = peer.Unmap()
	if !peer.IsValid() || !ps.Trusted(peer) {
		return peer
	}
	client := peer
	var hops []string
	for _, h := range c.Request().Header.PeekAll(fiber.HeaderXForwardedFor) {
		hops = append(hops, strings.Split(string(h), ",")...)
	}
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := hop(strings.TrimSpace(hops[i]))
		if err != nil {
			return client
		}
		client = a.Unmap()
		if !ps.Trusted(client) {
			return client
		}
	}
	return client
}

// hop parses one X-Forwarded-For entry: an address, or an address and port.
func hop(s string) (netip.Addr, error) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		ap, perr := netip.ParseAddrPort(s)
		if perr != nil {
			return netip.Addr{}, err
		}
		a = ap.Addr()
	}
	return a, nil
}
