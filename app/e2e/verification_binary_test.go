package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/mail/mailtest"
)

func postJSON(t *testing.T, url string, body any) (int, map[string]any) {
	t.Helper()
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	resp, err := http.Post(url, "application/json", bytes.NewReader(raw))
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(out, &m), "body: %s", out)
	return resp.StatusCode, m
}

// The real binary with verification on: the SMTP server is checked at start and by /readyz,
// a code is mailed, verified once, and never appears in the server's logs.
func TestBinarySendsAndVerifiesCodes(t *testing.T) {
	t.Parallel()
	smtp := mailtest.Start(t, mailtest.Options{})
	dir := t.TempDir()
	env := append(apptest.DataEnv(t, dir),
		"IDVAULT_VERIFICATION__ENABLED=true",
		"IDVAULT_MAIL__HOST=127.0.0.1", fmt.Sprintf("IDVAULT_MAIL__PORT=%d", smtp.Port()),
		"IDVAULT_MAIL__TLS=none", "IDVAULT_MAIL__FROM=codes@idvault.test")
	apptest.InitData(t, dir, env)
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "prod", "--json")
	require.Equal(t, 0, code, errOut)
	var created clitest.Created
	require.NoError(t, json.Unmarshal([]byte(out), &created))

	p := apptest.Start(t, dir, env)
	resp, err := http.Get(p.URL + "/readyz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, "SMTP reachable: ready")

	status, body := postJSON(t, p.URL+"/verification/email", map[string]any{
		"app_id": created.App.ID, "auth_token": created.AuthToken,
		"email_data": map[string]any{"subject": "Code SERVICE_VERIFICATION_CODE", "to_email": "dana@example.com",
			"text": "Your code: SERVICE_VERIFICATION_CODE"},
	})
	require.Equal(t, http.StatusOK, status, "%v", body)
	msgs := smtp.Messages()
	require.Len(t, msgs, 1)
	m := regexp.MustCompile(`Your code: (\d{8})`).FindSubmatch(msgs[0].Data)
	require.NotNil(t, m, "mail: %s", msgs[0].Data)
	mailed := string(m[1])

	verify := map[string]any{"app_id": created.App.ID, "auth_token": created.AuthToken, "email": "dana@example.com", "verification_code": mailed}
	status, body = postJSON(t, p.URL+"/verification/email/verify", verify)
	require.Equal(t, http.StatusOK, status, "%v", body)
	status, body = postJSON(t, p.URL+"/verification/email/verify", verify)
	require.Equal(t, http.StatusConflict, status, "single use: %v", body)

	// /code is for test-mode apps only.
	status, body = postJSON(t, p.URL+"/verification/email/code", map[string]any{"app_id": created.App.ID, "auth_token": created.AuthToken, "email": "dana@example.com"})
	require.Equal(t, http.StatusForbidden, status)
	require.Equal(t, "app_is_not_test", body["error"].(map[string]any)["code"])

	// With the SMTP server gone, /readyz says so.
	smtp.Close()
	require.Eventually(t, func() bool {
		resp, err := http.Get(p.URL + "/readyz")
		if err != nil {
			return false
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(raw), `"smtp":"failed`)
	}, 10*1e9, 100*1e6)

	p.Stop(t)
	logs := p.Stderr.String() + p.Stdout.String()
	require.NotContains(t, logs, mailed, "a verification code reached the logs")
	require.NotContains(t, logs, created.AuthToken)
}

// SIGTERM while a send is in flight: the request finishes (the mail is sent and the client gets
// its 200) before the server exits, and the exit is clean.
func TestBinaryShutdownLetsInFlightRequestsFinish(t *testing.T) {
	t.Parallel()
	smtp := mailtest.Start(t, mailtest.Options{})
	smtp.SetFault(mailtest.Fault{At: mailtest.AtData, Action: mailtest.Stall, Duration: 1500 * time.Millisecond})
	dir := t.TempDir()
	env := append(apptest.DataEnv(t, dir),
		"IDVAULT_VERIFICATION__ENABLED=true",
		"IDVAULT_MAIL__HOST=127.0.0.1", fmt.Sprintf("IDVAULT_MAIL__PORT=%d", smtp.Port()),
		"IDVAULT_MAIL__TLS=none", "IDVAULT_MAIL__FROM=codes@idvault.test", "IDVAULT_MAIL__TIMEOUT=20s")
	apptest.InitData(t, dir, env)
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "t", "--test", "--json")
	require.Equal(t, 0, code, errOut)
	var created clitest.Created
	require.NoError(t, json.Unmarshal([]byte(out), &created))
	p := apptest.Start(t, dir, env)

	before := smtp.Connections() // the start-up SMTP check
	done := make(chan int, 1)
	go func() {
		status, _ := postJSON(t, p.URL+"/verification/email", map[string]any{
			"app_id": created.App.ID, "auth_token": created.AuthToken,
			"email_data": map[string]any{"subject": "s", "to_email": "eve@example.com", "text": "code SERVICE_VERIFICATION_CODE"},
		})
		done <- status
	}()
	require.Eventually(t, func() bool { return smtp.Connections() > before }, 10*time.Second, 10*time.Millisecond)
	time.Sleep(200 * time.Millisecond) // the request is now waiting on the stalled DATA
	require.NoError(t, p.Cmd.Process.Signal(syscall.SIGTERM))
	select {
	case status := <-done:
		require.Equal(t, http.StatusOK, status, "the in-flight request completed")
	case <-time.After(15 * time.Second):
		t.Fatal("the in-flight request never completed")
	}
	require.NoError(t, p.Cmd.Wait(), "clean exit; stderr:\n%s", p.Stderr.String())
	require.Equal(t, 1, smtp.MessageCount(), "the mail went out")
}
