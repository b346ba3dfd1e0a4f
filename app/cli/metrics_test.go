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
)

// get fetches url and returns its status and body.
func get(t *testing.T, url string, header ...string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(body)
}

// Labelled counters exist at 0 from the first scrape, for every label they can take; a
// request refused for a wrong admin token is counted under the route it asked for.
func TestMetricsFromTheStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deadSMTP, _ := apptest.DeadPort(t)
	env := append(apptest.DataEnv(t, dir), "IDVAULT_VERIFICATION__ENABLED=true",
		"IDVAULT_MAIL__HOST=127.0.0.1", fmt.Sprintf("IDVAULT_MAIL__PORT=%d", deadSMTP), "IDVAULT_MAIL__TLS=none")
	p := apptest.Start(t, dir, env)
	code, body := get(t, p.URL+"/metrics")
	require.Equal(t, http.StatusOK, code)
	for _, series := range []string{
		`idvault_verification_send_failures_total{stage="tls"} 0`,
		`idvault_verification_send_failures_total{stage="connect"} 0`,
		`idvault_verification_throttled_total{reason="address"} 0`,
		`idvault_verification_throttled_total{reason="ip"} 0`,
		`idvault_verification_verifies_total{result="ok"} 0`,
		`idvault_verification_verifies_total{result="wrong"} 0`,
		`idvault_admin_auth_refusals_total{reason="wrong_token"} 0`,
	} {
		require.Contains(t, body, series+"\n")
	}

	code, _ = get(t, p.URL+"/admin/apps/nope", "Authorization", "Bearer wrong")
	require.Equal(t, http.StatusUnauthorized, code)
	_, body = get(t, p.URL+"/metrics")
	require.Contains(t, body, `idvault_http_requests_total{method="GET",route="/admin/apps/:app_id",status="401"} 1`+"\n")
	require.Contains(t, body, `idvault_admin_auth_refusals_total{reason="wrong_token"} 1`+"\n")
	p.Stop(t) // request log lines are written at most 50 ms later: all are out once it stopped
	require.Contains(t, p.Stderr.String(), `route=/admin/apps/:app_id status=401`)
}

// metrics.listen serves /metrics on an address of its own (and not on server.listen);
// metrics.enabled false serves them nowhere.
func TestMetricsListenAndEnabled(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	metricsAddr := fmt.Sprintf("127.0.0.1:%d", apptest.FreePort(t))
	p := apptest.Start(t, dir, append(apptest.DataEnv(t, dir), "IDVAULT_METRICS__LISTEN="+metricsAddr))
	code, body := get(t, "http://"+metricsAddr+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "idvault_build_info{")
	code, _ = get(t, p.URL+"/healthz")
	require.Equal(t, http.StatusOK, code)
	_, body = get(t, "http://"+metricsAddr+"/metrics")
	require.Contains(t, body, `idvault_http_requests_total{method="GET",route="/healthz",status="200"} `, "the same registry")
	code, body = get(t, p.URL+"/metrics")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, "feature_not_enabled")
	p.Stop(t)
	require.Contains(t, p.Stderr.String(), "metrics listening")

	dir = t.TempDir()
	p = apptest.Start(t, dir, append(apptest.DataEnv(t, dir), "IDVAULT_METRICS__ENABLED=false"))
	code, _ = get(t, p.URL+"/metrics")
	require.Equal(t, http.StatusNotFound, code)
	p.Stop(t)
}

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
		e := env(dir)
		e.Environ = append(e.Environ, "IDVAULT_SERVER__LISTEN=127.0.0.1:0", "IDVAULT_VERIFICATION__ENABLED=false",
			"IDVAULT_METRICS__LISTEN="+metricsAddr)
		var rebound, plain int
		var body string
		e.Ready = func(string) {
			defer cancel()
			plain, _ = get(t, scrape)
			req, err := http.NewRequest(http.MethodGet, scrape, nil)
			require.NoError(t, err)
			req.Host = "rebind.attacker.example" // a page of that name made to resolve to this machine
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			rebound, body = resp.StatusCode, string(raw)
		}
		_, errOut, code := runWith(ctx, t, e, "serve")
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
