package idtoken

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
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
// redirects, none to http off loopback. For an issuer that is not on this machine, nothing on
// this machine is fetched: the jwks_uri and redirects may not name a loopback host, and no
// connection is made to a loopback or unspecified address (a name resolving to 127.0.0.1), so a
// provider, or whoever answers for it, cannot make idvault send requests to the services
// listening on its own host (idvault's admin API, a database, a metadata proxy). Through a
// proxy from the environment (HTTPS_PROXY...), which may well listen on loopback, only the
// names are checked.
func newClient(issuer string) *http.Client {
	local := onLoopback(issuer)
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{ // http.DefaultTransport's settings
		Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext, ForceAttemptHTTP2: true,
		MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if req, err := http.NewRequest(http.MethodGet, issuer, nil); !local && err == nil {
		if proxy, err := tr.Proxy(req); err == nil && proxy == nil {
			d.Control = refuseLoopback
		}
	}
	return &http.Client{Timeout: 10 * time.Second, Transport: tr, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if len(via) >= 5 {
			return errors.New("idtoken: too many redirects")
		}
		return checkKeysURL(req.URL.String(), local) // a redirect may not downgrade to http off loopback
	}}
}

// refuseLoopback is a dialer's Control for an issuer off this machine.
func refuseLoopback(_, address string, _ syscall.RawConn) error {
	if ap, err := netip.ParseAddrPort(address); err == nil && (ap.Addr().Unmap().IsLoopback() || ap.Addr().IsUnspecified()) {
		return fmt.Errorf("idtoken: refused to connect to %s: the issuer is not on this machine, so its documents may not come from it", address)
	}
	return nil
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
