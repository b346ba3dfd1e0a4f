package idtoken

import (
	"context"
	"net/http"
	"net/http/httptest"
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
