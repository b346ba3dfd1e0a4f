package e2e_test

import (
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/idservertest"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
)

// clientPage is a web app's page: it calls the identity server with the signed-in user's ID
// token, as the OIDC guide's example does (app/idtoken/OIDC.md), and shows the answer.
const clientPage = `<!doctype html>
<html><head><meta charset="utf-8"><title>client</title></head>
<body><h1>A web app fetching its user's identity</h1><pre id="out">not yet</pre>
<script>
async function fetchIdentity(api, idToken, email) {
  const out = document.getElementById('out');
  try {
    const resp = await fetch(api + '/identity', {
      method: 'POST',
      headers: { 'Authorization': 'Bearer ' + idToken, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email }),
    });
    const body = await resp.json();
    out.textContent = location.origin + ': ' + resp.status + ' ' + Object.keys(body).join(', ');
    return JSON.stringify({ status: resp.status, body });
  } catch (e) {
    out.textContent = location.origin + ': blocked: ' + e;
    return JSON.stringify({ blocked: String(e) });
  }
}
</script></body></html>`

// servePage serves clientPage on a loopback port: its own origin.
func servePage(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(clientPage))
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// In a real browser: a page on an allowed origin calls POST /identity with its user's ID token
// and gets the identity; a page on another origin is blocked by CORS (its request is never
// sent, so nothing is stored).
func TestBrowserFetchesItsOwnIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary and chromium")
	}
	t.Parallel()
	ctx := apptest.Browser(t)
	iss := idtokentest.Start(t, 0)
	allowed, other := servePage(t), servePage(t)
	dir := t.TempDir()
	env := append(oidcEnv(t, dir, iss.Port), "IDVAULT_IDENTITY_SERVER__CORS_ORIGINS="+allowed)
	p := apptest.Start(t, dir, env)
	_, file, _, _ := runtime.Caller(0)
	shots := filepath.Join(filepath.Dir(file), "test-output")
	require.NoError(t, os.MkdirAll(shots, 0o755))

	call := func(page, email string) map[string]any {
		t.Helper()
		tok := iss.IDToken(t, "RS256", idservertest.Audience, email)
		require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(page)))
		args, _ := json.Marshal([]string{p.URL, tok, email})
		raw, err := chromedp.Run(ctx, chromedp.Evaluate[string](`fetchIdentity(...`+string(args)+`)`, chromedp.EvalAwaitPromise))
		require.NoError(t, err)
		var res map[string]any
		require.NoError(t, json.Unmarshal([]byte(raw), &res), raw)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		require.NoError(t, err)
		name := "allowed-origin.png"
		if page == other {
			name = "other-origin.png"
		}
		require.NoError(t, os.WriteFile(filepath.Join(shots, name), png, 0o644))
		return res
	}

	res := call(allowed, "erin@example.com")
	require.Equal(t, float64(200), res["status"], "%v", res)
	body := res["body"].(map[string]any)
	require.NotEmpty(t, body["serviceIdentity"])
	require.Equal(t, body["serviceIdentity"], body["tankerIdentity"])
	status, backend := postWith(t, p.URL, "/identity", idservertest.AppToken, "erin@example.com")
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, backend["serviceIdentity"], body["serviceIdentity"], "the record the backend gets")

	res = call(other, "frank@example.com")
	require.Contains(t, res["blocked"], "Failed to fetch", "%v", res)
	require.NotContains(t, res, "status")

	p.Stop(t)
	logs := p.Stderr.String()
	require.Contains(t, logs, "method=OPTIONS route=/identity status=204", "the allowed page's preflight")
	require.Contains(t, logs, "method=OPTIONS route=/identity status=405", "the other page's preflight, refused")
	require.Equal(t, 2, strings.Count(logs, "method=POST route=/identity status=200"),
		"the page's request and the backend's; the other origin's POST was never sent")
	t.Logf("screenshots in %s", shots)
}
