package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/idservertest"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
)

// oidcEnv is binaryEnv with identity_server.oidc on for an issuer on port.
func oidcEnv(t *testing.T, dir string, port int) []string {
	return append(binaryEnv(t, dir),
		"IDVAULT_IDENTITY_SERVER__TOKEN="+idservertest.AppToken,
		"IDVAULT_IDENTITY_SERVER__OIDC__ISSUER=http://127.0.0.1:"+strconv.Itoa(port),
		"IDVAULT_IDENTITY_SERVER__OIDC__AUDIENCE="+idservertest.Audience)
}

func postWith(t *testing.T, base, path, bearer, email string) (int, map[string]any) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"email": email})
	req, err := http.NewRequest(http.MethodPost, base+path, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+bearer)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var m map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
	return resp.StatusCode, m
}

// The dead issuer: the real binary starts while its OpenID provider is down, answers /healthz
// and /readyz, gives ID tokens 503 identity_provider_unavailable and the app token its
// identity; once the provider is up, ID tokens work without a restart.
func TestBinaryDeadIssuer(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	port, release := apptest.DeadPort(t)
	p := apptest.Start(t, dir, oidcEnv(t, dir, port)) // waits for /healthz 200
	for _, path := range []string{"/healthz", "/readyz"} {
		resp, err := http.Get(p.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
	}
	const idToken = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIiwidHlwIjoiSldUIn0.eyJhdWQiOiJ4In0.c2lnbmF0dXJl"
	status, body := postWith(t, p.URL, "/identity", idToken, "dead@example.com")
	require.Equal(t, http.StatusServiceUnavailable, status)
	require.Equal(t, "the identity provider cannot be reached to check the ID token; retry later", body["error"])
	status, body = postWith(t, p.URL, "/identity", idservertest.AppToken, "dead@example.com")
	require.Equal(t, http.StatusOK, status, "the app token works while the provider is down: %v", body)
	want := body["serviceIdentity"]

	release()
	iss := idtokentest.Start(t, port)
	tok := iss.IDToken(t, "RS256", idservertest.Audience, "dead@example.com")
	deadline := time.Now().Add(15 * time.Second) // past the 2 s during which a failure is not retried
	for {
		status, body = postWith(t, p.URL, "/identity", tok, "dead@example.com")
		if status != http.StatusServiceUnavailable || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.Equal(t, http.StatusOK, status, "body: %v", body)
	require.Equal(t, want, body["serviceIdentity"])
	require.Equal(t, want, body["tankerIdentity"])

	p.Stop(t)
	logs := p.Stdout.String() + p.Stderr.String()
	require.Contains(t, logs, "identity_server_oidc=true")
	require.Contains(t, logs, "cannot fetch the identity provider's keys")
	for _, secret := range []string{tok, "dead@example.com", "sub-dead@example.com", want.(string), idservertest.AppToken} {
		require.NotContains(t, logs, secret)
	}
}

// A bad identity_server.oidc or cors_origins is a configuration problem naming the key (the
// same Validate refuses `serve`; `config check` always exits, so a regression cannot hang).
func TestBinaryRefusesBadOIDCConfig(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	env := binaryEnv(t, dir)
	for key, bad := range map[string][]string{
		"identity_server.oidc.audience":   {"IDVAULT_IDENTITY_SERVER__OIDC__ISSUER=https://auth.example.com"},
		"identity_server.oidc.issuer":     {"IDVAULT_IDENTITY_SERVER__OIDC__ISSUER=http://auth.example.com", "IDVAULT_IDENTITY_SERVER__OIDC__AUDIENCE=x"},
		"identity_server.oidc.algorithms": {"IDVAULT_IDENTITY_SERVER__OIDC__ISSUER=https://a.example.com", "IDVAULT_IDENTITY_SERVER__OIDC__AUDIENCE=x", "IDVAULT_IDENTITY_SERVER__OIDC__ALGORITHMS=RS256,HS256"},
		"identity_server.cors_origins":    {"IDVAULT_IDENTITY_SERVER__OIDC__ISSUER=https://a.example.com", "IDVAULT_IDENTITY_SERVER__OIDC__AUDIENCE=x", "IDVAULT_IDENTITY_SERVER__CORS_ORIGINS=*"},
	} {
		stdout, stderr, code := apptest.RunCLI(t, dir, append(append([]string{}, env...), bad...), "config", "check")
		require.Equal(t, 3, code, "%s: %s%s", key, stdout, stderr)
		require.Contains(t, stdout+stderr, "problem: "+key, key)
	}
}
