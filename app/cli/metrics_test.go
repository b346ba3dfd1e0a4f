package cli_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
)

// The metrics listener of its own checks Host as the main listener does (DNS rebinding: a JSON
// 421 host_not_allowed), and a metrics.listen that is not a loopback address is logged as a
// warning at start (/metrics has no authentication); a loopback one is not.
func TestMetricsListenerChecksHostAndWarns(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		host string
		warn bool
	}{{"127.0.0.1", false}, {"0.0.0.0", true}} {
		dir := t.TempDir()
		metricsAddr := fmt.Sprintf("%s:%d", tc.host, apptest.FreePort(t))
		scrape := "http://" + strings.Replace(metricsAddr, "0.0.0.0", "127.0.0.1", 1) + "/metrics"
		ctx, cancel := context.WithCancel(context.Background())
		e := clitest.Env(dir)
		e.Environ = append(e.Environ, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false",
			"IDVAULT_METRICS__LISTEN="+metricsAddr)
		var rebound, plain int
		var body string
		e.Ready = func(string) {
			defer cancel()
			plain, _ = clitest.Get(t, scrape)
			req, err := http.NewRequest(http.MethodGet, scrape, nil)
			require.NoError(t, err)
			req.Host = "rebind.attacker.example" // a page of that name made to resolve to this machine
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			rebound, body = resp.StatusCode, string(raw)
		}
		_, errOut, code := clitest.RunWith(ctx, t, e, "serve")
		require.Equal(t, 0, code, errOut)
		require.Equal(t, http.StatusOK, plain, metricsAddr)
		if tc.warn {
			require.Equal(t, http.StatusOK, rebound, "any host on a non-loopback address without metrics.allowed_hosts")
			require.Contains(t, errOut, "level=WARN msg=\"metrics.listen is not a loopback address")
			continue
		}
		require.Equal(t, http.StatusMisdirectedRequest, rebound)
		require.Contains(t, body, `"code":"host_not_allowed"`)
		require.NotContains(t, body, "idvault_build_info")
		require.NotContains(t, errOut, "metrics.listen is not a loopback address")
	}
}
