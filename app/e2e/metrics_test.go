package e2e_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
)

// Labelled counters exist at 0 from the first scrape, for every label they can take; a
// request refused for a wrong admin token is counted under the route it asked for.
func TestMetricsFromTheStart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	deadSMTP, _ := apptest.DeadPort(t)
	env := append(apptest.DataEnv(t, dir), "IDVAULT_VERIFICATION__ENABLED=true",
		"IDVAULT_MAIL__HOST=127.0.0.1", fmt.Sprintf("IDVAULT_MAIL__PORT=%d", deadSMTP), "IDVAULT_MAIL__TLS=none")
	p := apptest.Start(t, dir, env)
	code, body := clitest.Get(t, p.URL+"/metrics")
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

	code, _ = clitest.Get(t, p.URL+"/admin/apps/nope", "Authorization", "Bearer wrong")
	require.Equal(t, http.StatusUnauthorized, code)
	_, body = clitest.Get(t, p.URL+"/metrics")
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
	code, body := clitest.Get(t, "http://"+metricsAddr+"/metrics")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, body, "idvault_build_info{")
	code, _ = clitest.Get(t, p.URL+"/healthz")
	require.Equal(t, http.StatusOK, code)
	_, body = clitest.Get(t, "http://"+metricsAddr+"/metrics")
	require.Contains(t, body, `idvault_http_requests_total{method="GET",route="/healthz",status="200"} `, "the same registry")
	code, body = clitest.Get(t, p.URL+"/metrics")
	require.Equal(t, http.StatusNotFound, code)
	require.Contains(t, body, "feature_not_enabled")
	p.Stop(t)
	require.Contains(t, p.Stderr.String(), "metrics listening")

	dir = t.TempDir()
	p = apptest.Start(t, dir, append(apptest.DataEnv(t, dir), "IDVAULT_METRICS__ENABLED=false"))
	code, _ = clitest.Get(t, p.URL+"/metrics")
	require.Equal(t, http.StatusNotFound, code)
	p.Stop(t)
}
