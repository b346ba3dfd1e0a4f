package idtoken

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// For an issuer off this machine, the default client connects to nothing on it, whatever the
// URL names (a loopback address, localhost, a name resolving to it): a provider cannot make
// idvault send requests to the services on its own host. A development issuer on loopback is
// fetched as before.
func TestDefaultClientFetchesNothingOnThisMachineForARemoteIssuer(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(srv.Close)
	get := func(c *http.Client, url string) error {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		if err == nil {
			_ = resp.Body.Close()
		}
		return err
	}
	remote := newClient("https://idp.example.com")
	port := srv.URL[strings.LastIndexByte(srv.URL, ':'):]
	for _, u := range []string{srv.URL, "http://localhost" + port, "http://[::ffff:127.0.0.1]" + port, "http://0.0.0.0" + port} {
		err := get(remote, u+"/jwks")
		require.Error(t, err, u)
		require.Contains(t, err.Error(), "the issuer is not on this machine", u)
	}
	require.Zero(t, hits.Load(), "no request reached the loopback server")
	require.NoError(t, get(newClient(srv.URL), srv.URL+"/jwks"), "an issuer on loopback is fetched")
	require.Equal(t, int32(1), hits.Load())
}

// Link-local addresses (a cloud's metadata service at 169.254.169.254) are refused like loopback
// for an issuer off this machine; other addresses, private ones included (a provider on the
// company network), are not.
func TestRemoteIssuerRefusesLinkLocalAddresses(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"169.254.169.254:80", "[fe80::1]:443", "[::ffff:169.254.169.254]:80", "127.0.0.2:443", "[::]:443"} {
		require.Error(t, refuseThisMachine(addr, false), addr)
		require.Error(t, refuseThisMachine(addr, true), "%s, even as the issuer's host", addr)
	}
	for _, addr := range []string{"10.0.0.7:443", "192.168.1.10:8443", "203.0.113.5:443", "[2001:db8::1]:443"} {
		if !ownAddress(netip.MustParseAddrPort(addr).Addr()) {
			require.NoError(t, refuseThisMachine(addr, false), addr)
		}
	}
}

// The addresses of this machine's own interfaces (not loopback: 192.0.2.2 on eth0) are refused
// for an issuer off this machine, as loopback is, unless the connection is to the issuer's own
// host and port: a provider cannot point idvault's fetches at a service listening on the host's
// public or private address. The refusal comes before any connection is attempted.
func TestRemoteIssuerRefusesThisMachinesOwnAddresses(t *testing.T) {
	t.Parallel()
	addrs, err := net.InterfaceAddrs()
	require.NoError(t, err)
	var own []netip.Addr
	for _, ia := range addrs {
		if p, ok := ia.(*net.IPNet); ok {
			if a, ok := netip.AddrFromSlice(p.IP); ok && !a.Unmap().IsLoopback() && !a.IsLinkLocalUnicast() {
				own = append(own, a.Unmap())
			}
		}
	}
	if len(own) == 0 {
		t.Skip("this machine has no address besides loopback and link-local ones")
	}
	for _, a := range own {
		addr := netip.AddrPortFrom(a, 8443).String()
		err := refuseThisMachine(addr, false)
		require.ErrorContains(t, err, "an address of this machine, and not the issuer's own host", addr)
		require.NoError(t, refuseThisMachine(addr, true), "%s as the issuer's own host", addr)

		dial := newClient("https://idp.example.com").Transport.(*http.Transport).DialContext
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err = dial(ctx, "tcp", addr)
		cancel()
		require.ErrorContains(t, err, "an address of this machine", "a jwks_uri on %s", addr)
	}
	require.Equal(t, "idp.example.com:443", hostPort("https://idp.example.com"))
	require.Equal(t, "192.0.2.2:8443", hostPort("https://192.0.2.2:8443/realms/x"))
	require.Equal(t, "[2001:db8::1]:443", hostPort("https://[2001:db8::1]/"))
}

// With a proxy in the environment, the proxy's own address is the one loopback address the
// client of a remote issuer dials; a connection sent direct (NO_PROXY) to this machine is still
// refused.
func TestRemoteIssuerDialsOnlyTheProxyOnThisMachine(t *testing.T) {
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = proxy.Close() })
	other, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = other.Close() })
	t.Setenv("HTTPS_PROXY", "http://"+proxy.Addr().String())
	t.Setenv("https_proxy", "")
	t.Setenv("HTTP_PROXY", "")
	t.Setenv("http_proxy", "")
	require.Equal(t, map[string]bool{proxy.Addr().String(): true}, proxyAddrs())

	dial := newClient("https://idp.example.com").Transport.(*http.Transport).DialContext
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := dial(ctx, "tcp", proxy.Addr().String())
	require.NoError(t, err, "the proxy is dialled")
	_ = c.Close()
	_, err = dial(ctx, "tcp", other.Addr().String())
	require.ErrorContains(t, err, "the issuer is not on this machine")

	t.Setenv("HTTPS_PROXY", "proxy.internal:3128")
	require.Equal(t, map[string]bool{"proxy.internal:3128": true}, proxyAddrs())
	t.Setenv("HTTPS_PROXY", "https://proxy.internal")
	require.Equal(t, map[string]bool{"proxy.internal:443": true}, proxyAddrs())
}
