package clientip_test

import (
	"io"
	"net/http/httptest"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/clientip"
)

// In-memory requests (app.Test) come from 0.0.0.0.
func TestClientBehindTrustedProxies(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		proxies []string
		xff     []string
		want    string
	}{
		{"no proxy: the peer, whatever the header says", nil, []string{"203.0.113.5"}, "0.0.0.0"},
		{"a trusted peer: its forwarded client", []string{"0.0.0.0"}, []string{"203.0.113.5"}, "203.0.113.5"},
		{"the right-most untrusted hop, not what the client wrote", []string{"0.0.0.0", "10.0.0.0/8"}, []string{"6.6.6.6, 203.0.113.5, 10.1.2.3"}, "203.0.113.5"},
		{"several headers read as one list", []string{"0.0.0.0", "10.0.0.0/8"}, []string{"6.6.6.6", "203.0.113.5, 10.1.2.3"}, "203.0.113.5"},
		{"every hop trusted: the left-most", []string{"0.0.0.0", "10.0.0.0/8"}, []string{"10.9.9.9, 10.1.2.3"}, "10.9.9.9"},
		{"a hop that does not parse stops the walk", []string{"0.0.0.0", "10.0.0.0/8"}, []string{"203.0.113.5, junk, 10.1.2.3"}, "10.1.2.3"},
		{"IPv4-mapped IPv6 as IPv4", []string{"0.0.0.0"}, []string{"::ffff:203.0.113.5"}, "203.0.113.5"},
		{"no header: the proxy itself", []string{"0.0.0.0"}, nil, "0.0.0.0"},
		// Load balancers that write the client's port: every client used to count as the proxy.
		{"an entry with a port", []string{"0.0.0.0", "10.0.0.0/8"}, []string{"6.6.6.6, 203.0.113.5:41234, 10.1.2.3:80"}, "203.0.113.5"},
		{"an IPv6 entry with a port", []string{"0.0.0.0"}, []string{"[2001:db8::1]:443"}, "2001:db8::1"},
	}
	for _, c := range cases {
		ps, err := clientip.Parse(c.proxies)
		require.NoError(t, err, c.name)
		app := fiber.New()
		app.Get("/", func(ctx *fiber.Ctx) error { return ctx.SendString(ps.Of(ctx).String()) })
		req := httptest.NewRequest(fiber.MethodGet, "/", nil)
		for _, h := range c.xff {
			req.Header.Add(fiber.HeaderXForwardedFor, h)
		}
		resp, err := app.Test(req, -1)
		require.NoError(t, err, c.name)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, c.want, string(body), c.name)
	}
}

func TestParseNamesTheBadEntry(t *testing.T) {
	t.Parallel()
	_, err := clientip.Parse([]string{"10.0.0.1", "nonsense"})
	require.ErrorContains(t, err, "server.trusted_proxies[1]")
}
