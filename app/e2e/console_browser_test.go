package e2e_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/identity"
)

// outputDir is where the screenshots go (gitignored; printed in the test log).
func outputDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "test-output")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	return dir
}

func run[T any](t *testing.T, ctx context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(ctx, a)
	require.NoError(t, err)
	return v
}

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	require.NoError(t, chromedp.Do(ctx, steps...))
}

// submit clicks a submit button and waits for the page it leads to.
func submit(t *testing.T, ctx context.Context, sel string) *network.Response {
	t.Helper()
	resp, err := chromedp.RunResponse(ctx, chromedp.Click(chromedp.CSS(sel)))
	require.NoError(t, err, "click %s", sel)
	return resp
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return run(t, ctx, chromedp.Text(chromedp.CSS(sel)))
}

// adminGet reads the admin API of the server directly (adminDo), to check what the console did.
func adminGet(t *testing.T, p *apptest.Proc, path string) (int, map[string]any) {
	t.Helper()
	status, raw := adminDo(t, p, http.MethodGet, path, nil)
	var m map[string]any
	require.NoError(t, json.Unmarshal(raw, &m), "%s", raw)
	return status, m
}

// TestConsoleInBrowser drives the console of the real binary in headless Chromium, the way an
// operator would: a wrong token, sign in, create a test app and read its secret once, rotate
// its token, toggle an option, a form without its CSRF token, delete, sign out.
func TestConsoleInBrowser(t *testing.T) {
	t.Parallel()
	ctx := apptest.Browser(t)
	dir := t.TempDir()
	p := apptest.Start(t, dir, apptest.DataEnv(t, dir))
	token := p.AdminToken(t)
	shots := outputDir(t)

	// A wrong token is refused, and no session cookie is set.
	resp, err := chromedp.RunResponse(ctx, chromedp.Navigate(p.URL+"/console/"))
	require.NoError(t, err)
	require.Equal(t, int64(200), resp.Status)
	require.Equal(t, "Sign in · idvault console", run(t, ctx, chromedp.Title()))
	do(t, ctx, chromedp.SendKeys(chromedp.ID("token"), "not-the-admin-token"))
	resp = submit(t, ctx, "form button[type=submit]")
	require.Equal(t, int64(401), resp.Status)
	require.Contains(t, text(t, ctx, "#login-error"), "Wrong admin token")
	cookies, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.URL + "/console/"}})
	require.NoError(t, err)
	require.Empty(t, cookies.Cookies, "no session after a wrong token")

	// Sign in: the session cookie is HttpOnly and SameSite=Strict, and the token is nowhere in
	// the page, the URL or the storage.
	// (By keyboard: the token field has the focus, Enter submits.)
	// Chromium applies autofocus at a rendering step after the load, so the focus is awaited
	// (up to 10 s) rather than read once.
	focused, err := chromedp.Run(ctx, chromedp.Poll[bool](
		`document.activeElement !== null && document.activeElement.id === "token"`,
		chromedp.WithPollingTimeout(10*time.Second)))
	require.NoError(t, err, "the sign-in page puts the focus on the token field")
	require.True(t, focused, "the sign-in page puts the focus on the token field")
	resp, err = chromedp.RunResponse(ctx, chromedp.KeyEvent(token+kb.Enter))
	require.NoError(t, err)
	require.Equal(t, int64(200), resp.Status)
	require.Equal(t, p.URL+"/console/apps", run(t, ctx, chromedp.Location()))
	cookies, err = chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{p.URL + "/console/"}})
	require.NoError(t, err)
	require.Len(t, cookies.Cookies, 1)
	ck := cookies.Cookies[0]
	require.True(t, ck.HTTPOnly)
	require.Equal(t, network.CookieSameSiteStrict, ck.SameSite)
	require.NotContains(t, ck.Value, token)
	exposed := run(t, ctx, chromedp.Evaluate[string](`document.cookie + location.href + JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.documentElement.outerHTML`))
	require.NotContains(t, exposed, token)
	require.NotContains(t, exposed, ck.Value, "HttpOnly: scripts cannot read the session")

	// Create a test app: its secret and token are shown once, with a warning.
	do(t, ctx, chromedp.SendKeys(chromedp.ID("name"), "browser shop"), chromedp.Click(chromedp.ID("test")))
	resp = submit(t, ctx, "section[aria-labelledby=create-h] button[type=submit]")
	require.Equal(t, int64(200), resp.Status)
	loc := run(t, ctx, chromedp.Location())
	require.Contains(t, loc, "/secret")
	require.Contains(t, text(t, ctx, ".warning"), "Shown once")
	secret := run(t, ctx, chromedp.Value(chromedp.ID("app-secret")))
	authToken := run(t, ctx, chromedp.Value(chromedp.ID("auth-token")))
	require.NotContains(t, loc, secret)
	require.NotContains(t, loc, authToken)
	raw, err := base64.StdEncoding.DecodeString(secret)
	require.NoError(t, err)
	appID, err := identity.AppIDFromSecret(raw)
	require.NoError(t, err)
	urlID := base64.RawURLEncoding.EncodeToString(appID)
	status, body := adminGet(t, p, "/admin/apps/"+urlID)
	require.Equal(t, http.StatusOK, status, "the secret shown is the secret of the app created")
	app := body["app"].(map[string]any)
	require.Equal(t, "browser shop", app["name"])
	require.Equal(t, true, app["test"])
	visibleCopies := run(t, ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("button.copy")].filter(b => !b.hidden).length`))
	require.GreaterOrEqual(t, visibleCopies, 3, "copy buttons for the app ID, the secret and the token")

	// Shown once: the same page again no longer has them.
	resp, err = chromedp.RunResponse(ctx, chromedp.Reload())
	require.NoError(t, err)
	require.Equal(t, int64(410), resp.Status)
	page := run(t, ctx, chromedp.Evaluate[string](`document.documentElement.outerHTML`))
	require.NotContains(t, page, secret)
	require.NotContains(t, page, authToken)

	// The app page: both ID forms, and snippets with the real URL and app ID.
	resp, err = chromedp.RunResponse(ctx, chromedp.Navigate(p.URL+"/console/apps/"+urlID))
	require.NoError(t, err)
	require.Equal(t, int64(200), resp.Status)
	page = run(t, ctx, chromedp.Evaluate[string](`document.body.innerText`))
	stdID := base64.StdEncoding.EncodeToString(appID)
	require.Contains(t, page, stdID)
	require.Contains(t, page, urlID)
	require.Contains(t, page, `curl -s "`+p.URL+`/apps/`+urlID+`/private_identity?email=alice%40example.com"`)
	require.Contains(t, page, `new FakeAuthentication({ appId, url: '`+p.URL+`' })`)
	require.Contains(t, page, `const appId = '`+stdID+`';`)
	png := run(t, ctx, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Join(shots, "app.png"), png, 0o644))

	// Rotate the token: a new one, shown once; the old one no longer works.
	resp = submit(t, ctx, "#rotate")
	require.Equal(t, int64(200), resp.Status)
	newToken := run(t, ctx, chromedp.Value(chromedp.ID("auth-token")))
	require.NotEqual(t, authToken, newToken)
	require.Zero(t, run(t, ctx, chromedp.Evaluate[int](`document.querySelectorAll("#app-secret").length`)), "a rotation shows no app secret")

	// Toggle an option.
	do(t, ctx, chromedp.Navigate(p.URL+"/console/apps/"+urlID), chromedp.Click(chromedp.ID("registered_users_only")))
	resp = submit(t, ctx, "#save-options")
	require.Equal(t, int64(200), resp.Status)
	require.Contains(t, text(t, ctx, ".flash"), "Options saved")
	_, body = adminGet(t, p, "/admin/apps/"+urlID)
	require.Equal(t, true, body["app"].(map[string]any)["registered_users_only"])
	require.Equal(t, false, body["app"].(map[string]any)["legacy_errors"])

	// A form whose CSRF token was removed is refused and changes nothing.
	do(t, ctx, chromedp.Click(chromedp.ID("registered_users_only")),
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll("input[name=csrf]").forEach(e => e.remove())`))
	resp = submit(t, ctx, "#save-options")
	require.Equal(t, int64(403), resp.Status)
	require.Contains(t, text(t, ctx, ".error"), "CSRF")
	_, body = adminGet(t, p, "/admin/apps/"+urlID)
	require.Equal(t, true, body["app"].(map[string]any)["registered_users_only"], "nothing changed")

	// The app list: a screenshot for a person to look at, at desktop and phone widths; the
	// phone layout does not scroll sideways, and every field has a label.
	do(t, ctx, chromedp.Navigate(p.URL+"/console/apps"))
	require.Contains(t, text(t, ctx, "main"), "browser shop")
	unlabelled := run(t, ctx, chromedp.Evaluate[int](`[...document.querySelectorAll("input:not([type=hidden])")].filter(i => i.labels.length === 0).length`))
	require.Zero(t, unlabelled, "every input has a label")
	png = run(t, ctx, chromedp.FullScreenshot(100))
	shot := filepath.Join(shots, "apps.png")
	require.NoError(t, os.WriteFile(shot, png, 0o644))
	do(t, ctx, chromedp.EmulateViewport(375, 812, chromedp.EmulateMobile))
	do(t, ctx, chromedp.Reload())
	overflow := run(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
	require.False(t, overflow, "the narrow layout fits the screen")
	png = run(t, ctx, chromedp.FullScreenshot(100))
	narrow := filepath.Join(shots, "apps-narrow.png")
	require.NoError(t, os.WriteFile(narrow, png, 0o644))
	for _, path := range []string{"/console/server", "/console/apps/" + urlID, "/console/api"} {
		do(t, ctx, chromedp.Navigate(p.URL+path))
		overflow := run(t, ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > document.documentElement.clientWidth`))
		require.False(t, overflow, "%s fits a phone screen", path)
	}
	do(t, ctx, chromedp.EmulateViewport(1100, 900))
	t.Logf("screenshots of the app list: %s and %s", shot, narrow)

	// Without JavaScript the list still reads; only the copy buttons (which need it) stay hidden.
	_, err = chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: true})
	require.NoError(t, err)
	do(t, ctx, chromedp.Navigate(p.URL+"/console/apps"))
	require.Contains(t, text(t, ctx, "main"), stdID)
	require.Contains(t, text(t, ctx, "main"), urlID)
	buttons := run(t, ctx, chromedp.AttributesAll(chromedp.CSS("button.copy")))
	require.NotEmpty(t, buttons)
	for _, b := range buttons {
		require.Contains(t, b, "hidden", "a copy button is hidden without JavaScript")
	}
	_, err = chromedp.Call(ctx, emulation.SetScriptExecutionDisabled, emulation.SetScriptExecutionDisabledParams{Value: false})
	require.NoError(t, err)

	// The server page shows the readiness checks and offers a backup.
	do(t, ctx, chromedp.Navigate(p.URL+"/console/server"))
	server := text(t, ctx, "main")
	require.Contains(t, server, "Readiness: ready")
	require.Contains(t, server, "store")
	require.Contains(t, server, "idvault.db")
	png = run(t, ctx, chromedp.FullScreenshot(100))
	require.NoError(t, os.WriteFile(filepath.Join(shots, "server.png"), png, 0o644))

	// Delete, after typing the name on the confirmation page.
	do(t, ctx, chromedp.Navigate(p.URL+"/console/apps/"+urlID), chromedp.Click(chromedp.ID("delete")))
	require.Eventually(t, func() bool {
		l, err := chromedp.Run(ctx, chromedp.Location())
		return err == nil && strings.HasSuffix(l, "/delete")
	}, 20*time.Second, 50*time.Millisecond)
	do(t, ctx, chromedp.WaitVisible(chromedp.ID("confirm")), chromedp.SendKeys(chromedp.ID("confirm"), "browser shop"))
	resp = submit(t, ctx, "#confirm-delete")
	require.Equal(t, int64(200), resp.Status)
	require.Contains(t, text(t, ctx, ".flash"), "deleted")
	status, _ = adminGet(t, p, "/admin/apps/"+urlID)
	require.Equal(t, http.StatusNotFound, status)

	// Sign out: the session is gone on the server too.
	resp = submit(t, ctx, "nav button[type=submit]")
	require.Equal(t, int64(200), resp.Status)
	require.Equal(t, p.URL+"/console/login", run(t, ctx, chromedp.Location()))
	req, _ := http.NewRequest(http.MethodGet, p.URL+"/console/apps", nil)
	req.AddCookie(&http.Cookie{Name: ck.Name, Value: ck.Value})
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	old, err := noRedirect.Do(req)
	require.NoError(t, err)
	old.Body.Close()
	require.Equal(t, http.StatusSeeOther, old.StatusCode, "the old session cookie no longer opens the console")
	require.Equal(t, "/console/login", old.Header.Get("Location"))
}
