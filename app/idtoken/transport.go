package idtoken

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"syscall"
	"time"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/loopback"
)

// onLoopback reports whether the issuer is on this machine (a development provider).
func onLoopback(issuer string) bool {
	u, err := url.Parse(issuer)
	return err == nil && loopback.IsHost(u.Hostname())
}

// newClient is the default client for the provider's documents: 10 s per fetch, at most 5
// redirects, none to http off loopback. For an issuer that is not on a loopback address,
// nothing on this machine or its link is fetched: the jwks_uri and redirects may not name a
// loopback host, and no connection is made to a loopback, unspecified or link-local address (a
// name resolving to 127.0.0.1, or to 169.254.169.254, a cloud's metadata service), nor to an
// address of this machine's own interfaces (192.0.2.2 on eth0), except on the issuer's own
// host and port, which the operator named: so a provider, or whoever answers for it, cannot
// make idvault send requests to the services listening on its host (idvault's admin API, a
// database, a metadata service). A proxy from the environment (HTTPS_PROXY, HTTP_PROXY), which
// may well listen on loopback, is the one address exempt: every other connection, including
// one NO_PROXY sends direct, is checked.
func newClient(issuer string) *http.Client {
	local := onLoopback(issuer)
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	dial := d.DialContext
	if !local {
		proxies, issuerAddr := proxyAddrs(), hostPort(issuer)
		dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			if proxies[addr] {
				return d.DialContext(ctx, network, addr)
			}
			issuerHost := addr == issuerAddr
			guarded := &net.Dialer{Timeout: d.Timeout, KeepAlive: d.KeepAlive, Control: func(_, address string, _ syscall.RawConn) error {
				return refuseThisMachine(address, issuerHost)
			}}
			return guarded.DialContext(ctx, network, addr)
		}
	}
	tr := &http.Transport{ // http.DefaultTransport's settings
		Proxy: http.ProxyFromEnvironment, DialContext: dial, ForceAttemptHTTP2: true,
		MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("idtoken: too many redirects")
		}
		return checkKeysURL(req.URL.String(), local) // a redirect may not downgrade to http off loopback
	}}
}

// proxyAddrs are the host:port of the proxies the environment names (HTTPS_PROXY, HTTP_PROXY,
// either case), as the transport dials them.
func proxyAddrs() map[string]bool {
	addrs := map[string]bool{}
	for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		raw := os.Getenv(name)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" { // "proxy:3128", as Go's own reading allows
			if u, err = url.Parse("http://" + raw); err != nil {
				continue
			}
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "socks5": "1080", "socks5h": "1080"}[u.Scheme]
			if port == "" {
				port = "80"
			}
		}
		addrs[net.JoinHostPort(u.Hostname(), port)] = true
	}
	return addrs
}

// hostPort is the host:port the transport dials for the issuer URL (the scheme's port when it
// names none).
func hostPort(issuer string) string {
	u, err := url.Parse(issuer)
	if err != nil {
		return ""
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
	}
	return net.JoinHostPort(u.Hostname(), port)
}

// refuseThisMachine is the dialer's check, for an issuer not on loopback, of the resolved
// address it is about to connect to: never a loopback, unspecified or link-local address;
// never an address of this machine's interfaces, unless the connection is to the issuer's own
// host and port (issuerHost: a provider the operator runs on this machine under its address or
// public name).
func refuseThisMachine(address string, issuerHost bool) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return nil
	}
	a := ap.Addr().Unmap()
	if a.IsLoopback() || a.IsUnspecified() || a.IsLinkLocalUnicast() {
		return fmt.Errorf("idtoken: refused to connect to %s: the issuer is not on this machine, so its documents may not come from it or its link", address)
	}
	if !issuerHost && ownAddress(a) {
		return fmt.Errorf("idtoken: refused to connect to %s: an address of this machine, and not the issuer's own host (identity_server.oidc.issuer)", address)
	}
	return nil
}

// ownAddress reports whether a is an address of one of this machine's interfaces, read when a
// connection is made (interfaces come and go). If they cannot be read, none is assumed.
func ownAddress(a netip.Addr) bool {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, ia := range addrs {
		if p, ok := ia.(*net.IPNet); ok {
			if own, ok := netip.AddrFromSlice(p.IP); ok && own.Unmap() == a {
				return true
			}
		}
	}
	return false
}

// checkKeysURL holds the jwks_uri (and a redirect) to the issuer's rule: https, or http on a
// loopback address; on a loopback host only when the issuer is on one (issuerLocal).
func checkKeysURL(raw string, issuerLocal bool) error {
	u, err := url.Parse(raw)
	switch {
	case raw == "" || err != nil || u.Host == "":
		return fmt.Errorf("jwks_uri %q is not a URL", raw)
	case !issuerLocal && loopback.IsHost(u.Hostname()):
		return fmt.Errorf("jwks_uri %q is on this machine, and the issuer is not", raw)
	case config.TrustedTransport(u):
		return nil
	}
	return fmt.Errorf("jwks_uri %q: want https:// (http:// only on a loopback address)", raw)
}
