package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/idservertest"
	"github.com/idvault/idvault/app/idtoken/idtokentest"
)

// The browser example (app/idtoken/example) against a real OpenID provider (oidc-provider) and
// the real binary, in Chromium: from an allowed origin it signs in (authorization code with
// PKCE), waits out a 503 while the provider is down (Retry-After), fetches its identity (the
// record the backend gets), registers, fetches a public identity, and tells apart 403
// forbidden (another email), 401 (a refused token: sign in again), 403 email_not_verified and
// no_email_claim; from an origin not in identity_server.cors_origins, its call is refused by
// CORS and idvault logs the origin. A screenshot per step goes to test-output/.
func TestBrowserExample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary, oidc-provider and chromium")
	}
	t.Parallel()
	ctx := apptest.Browser(t)
	allowed, other := serveExample(t), serveExample(t)
	keys := filepath.Join(t.TempDir(), "provider-key.json")
	redirects := []string{allowed.origin + "/", other.origin + "/"}
	prov := idtokentest.StartProvider(t, 0, idservertest.Audience, keys, redirects...)
	dir := t.TempDir()
	p := apptest.Start(t, dir, append(oidcEnv(t, dir, prov.Port), "IDVAULT_IDENTITY_SERVER__CORS_ORIGINS="+allowed.origin))
	allowed.configure(prov.URL, idservertest.Audience, p.URL)
	other.configure(prov.URL, idservertest.Audience, p.URL)
	_, file, _, _ := runtime.Caller(0)
	shots := filepath.Join(filepath.Dir(file), "test-output")
	require.NoError(t, os.MkdirAll(shots, 0o755))
	pg := &page{t: t, ctx: ctx, shots: shots}

	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(allowed.origin+"/")))
	require.Equal(t, "Signed in as alice@example.com (verified).", pg.signIn("signin", "alice", prov.URL), "provider: %s", prov.Output())
	pg.shot("example-signed-in.png")

	// The provider goes down before idvault ever fetched its keys: 503 with Retry-After; the
	// page waits and tries again, and succeeds once the provider is back (same port, same key).
	prov.Stop()
	pg.click("identity")
	pg.wait("a 503 and a retry", `document.getElementById('status').dataset.code === 'retrying' ? 'yes' : ''`)
	status, _ := pg.eval(`document.getElementById('status').textContent`)
	require.Regexp(t, `^the identity provider cannot be reached to check the ID token; retry later: trying again in [12] s \(attempt 1\)\.$`, status, "Retry-After read")
	pg.shot("example-retrying.png")
	prov = idtokentest.StartProvider(t, prov.Port, idservertest.Audience, keys, redirects...)
	code, text := pg.result("identity-result")
	require.Equal(t, "ok", code, text)
	httpStatus, backend := postWith(t, p.URL, "/identity", idservertest.AppToken, "alice@example.com")
	require.Equal(t, http.StatusOK, httpStatus)
	require.Contains(t, text, "user "+backend["id"].(string)+", registered: false", "the record the backend gets")
	pg.shot("example-identity.png")

	pg.clear()
	pg.click("register")
	code, text = pg.result("identity-result")
	require.Equal(t, "ok", code, text)
	_, backend = postWith(t, p.URL, "/identity", idservertest.AppToken, "alice@example.com")
	require.Equal(t, true, backend["registered"])

	pg.click("public")
	code, text = pg.result("public-result")
	require.Equal(t, "ok", code, text)
	require.Contains(t, text, "Public identity of bob@example.com: ")

	// Another email than the token's: 403 forbidden, told apart by its code.
	pg.clear()
	_, err := pg.eval(`document.getElementById('email').value = 'bob@example.com'; ''`)
	require.NoError(t, err)
	pg.click("identity")
	code, text = pg.result("identity-result")
	require.Equal(t, "forbidden", code)
	require.Equal(t, "idvault serves your own identity only: this email is not the one you signed in with.", text)
	pg.shot("example-forbidden.png")

	// A token idvault refuses (its signature altered): 401, and the page asks to sign in again.
	pg.clear()
	_, err = pg.eval(`const tok = sessionStorage.getItem('id_token'); sessionStorage.setItem('id_token', tok.slice(0, -6) + (tok.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA')); ''`)
	require.NoError(t, err)
	pg.click("identity")
	code, text = pg.result("identity-result")
	require.Equal(t, "invalid_token", code)
	require.Equal(t, "invalid ID token: bad signature", text)
	code, text = pg.result("status")
	require.Equal(t, "signed_out", code)
	require.Equal(t, "Your sign-in was refused (invalid ID token: bad signature): sign in again.", text)
	state, _ := pg.eval(`document.getElementById('user').dataset.state`)
	require.Equal(t, "signed-out", state)

	// A user whose email the provider has not verified: 403 email_not_verified.
	require.Equal(t, "Signed in as unverified-uma@example.com (not verified by the provider).", pg.signIn("switch", "unverified-uma", prov.URL))
	pg.clear()
	pg.click("identity")
	code, text = pg.result("identity-result")
	require.Equal(t, "email_not_verified", code)
	require.Equal(t, "Your provider has not verified your email: verify it there, then sign in again.", text)
	pg.shot("example-unverified.png")

	// A user the provider gives no email: 403 no_email_claim.
	require.Equal(t, "Signed in as noemail-nina (not verified by the provider).", pg.signIn("switch", "noemail-nina", prov.URL))
	pg.clear()
	pg.click("identity")
	code, text = pg.result("identity-result")
	require.Equal(t, "no_email_claim", code)
	require.Equal(t, "Your provider did not put your email in the ID token (it needs the email scope, and the email in the ID token).", text)

	// The same page on an origin not in identity_server.cors_origins: signed in, but its call
	// is refused by the browser, and nothing is stored.
	require.NoError(t, chromedp.Do(ctx, chromedp.Navigate(other.origin+"/")))
	require.Equal(t, "Signed in as carol@example.com (verified).", pg.signIn("switch", "carol", prov.URL))
	pg.click("identity")
	code, text = pg.result("identity-result")
	require.Equal(t, "blocked", code)
	require.Contains(t, text, "idvault cannot be reached from "+other.origin+" (is it in identity_server.cors_origins?)")
	pg.shot("example-other-origin.png")

	p.Stop(t)
	logs := p.Stderr.String()
	require.Contains(t, logs, `msg="cors: origin not in identity_server.cors_origins, no grant" origin=`+other.origin+` preflight=true route=/identity`)
	require.Contains(t, logs, "method=OPTIONS route=/identity status=405", "the other origin's preflight, refused")
	require.NotContains(t, logs, "carol", "the other origin's request was never sent")
	for _, secret := range []string{"alice@example.com", "unverified-uma", backend["serviceIdentity"].(string), idservertest.AppToken} {
		require.NotContains(t, logs, secret)
	}
	t.Logf("screenshots in %s", shots)
}

// exampleSite serves the browser example (app/idtoken/example) on a loopback port, its own
// origin, with a config.js naming the provider and the idvault under test.
type exampleSite struct {
	origin string
	mu     sync.Mutex
	config string
}

func serveExample(t *testing.T) *exampleSite {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	files := http.FileServer(http.Dir(filepath.Join(filepath.Dir(file), "..", "idtoken", "example")))
	s := &exampleSite{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/config.js" {
			s.mu.Lock()
			defer s.mu.Unlock()
			w.Header().Set("Content-Type", "text/javascript; charset=utf-8")
			_, _ = w.Write([]byte(s.config))
			return
		}
		files.ServeHTTP(w, r)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	s.origin = "http://" + ln.Addr().String()
	return s
}

func (s *exampleSite) configure(issuer, clientID, api string) {
	raw, _ := json.Marshal(map[string]string{"issuer": issuer, "clientId": clientID, "api": api})
	s.mu.Lock()
	defer s.mu.Unlock()
	s.config = "window.exampleConfig = " + string(raw) + ";\n"
}

// page drives the example in Chromium.
type page struct {
	t     *testing.T
	ctx   context.Context
	shots string
}

// eval runs js in the page and returns its string result ("" on an error: the page may be
// navigating).
func (p *page) eval(js string) (string, error) {
	return chromedp.Run(p.ctx, chromedp.Evaluate[string](js))
}

// wait evaluates js until it returns a non-empty string, and returns it. The page navigates
// between the provider and the app, and retries after Retry-After: the deadline is generous.
func (p *page) wait(what, js string) string {
	p.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var err error
	var v string
	for time.Now().Before(deadline) {
		if v, err = p.eval(js); err == nil && v != "" {
			return v
		}
		time.Sleep(100 * time.Millisecond)
	}
	loc, _ := p.eval(`location.href + ' ' + document.body.innerText`)
	p.t.Fatalf("waiting for %s: %v; page: %s", what, err, loc)
	return ""
}

func (p *page) click(id string) {
	p.t.Helper()
	p.wait("button #"+id, fmt.Sprintf(`(() => { const b = document.getElementById(%q); if (!b || b.disabled) return ''; b.click(); return 'ok'; })()`, id))
}

// result waits for element id to show an answer and returns its code and text.
func (p *page) result(id string) (code, text string) {
	p.t.Helper()
	raw := p.wait("#"+id, fmt.Sprintf(`(() => { const e = document.getElementById(%q);
		return e && e.dataset.code && e.dataset.code !== 'retrying' ? JSON.stringify([e.dataset.code, e.textContent]) : ''; })()`, id))
	var r [2]string
	require.NoError(p.t, json.Unmarshal([]byte(raw), &r))
	return r[0], r[1]
}

// clear empties the answers, so that the next one is the next call's.
func (p *page) clear() {
	p.t.Helper()
	_, err := p.eval(`for (const id of ['identity-result', 'public-result', 'status']) { const e = document.getElementById(id); e.textContent = ''; e.dataset.code = ''; } ''`)
	require.NoError(p.t, err)
}

// signIn clicks button (signin or switch), signs in at the provider's login page as login,
// and waits for the example to show who is signed in.
func (p *page) signIn(button, login, provider string) string {
	p.t.Helper()
	p.click(button)
	p.wait("the provider's login page", fmt.Sprintf(`(() => {
		if (location.origin !== %q) return '';
		const f = document.querySelector('form');
		if (!f || !f.login) return '';
		f.login.value = %q; f.password.value = 'any password';
		setTimeout(() => f.submit(), 0);
		return 'ok'; })()`, provider, login))
	return p.wait("signed in", `document.getElementById('user')?.dataset.state === 'signed-in' ? document.getElementById('user').textContent : ''`)
}

func (p *page) shot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	require.NoError(p.t, err)
	require.NoError(p.t, os.WriteFile(filepath.Join(p.shots, name), png, 0o644))
}
