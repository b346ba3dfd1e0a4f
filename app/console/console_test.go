package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/admin"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/fakeauth"
	"github.com/idvault/idvault/app/server"
)

const adminToken = "console-admin-token-0123456789"

type fixture struct {
	env *apptest.Env
	app *fiber.App
}

func newFixture(t *testing.T, enabled bool, declared ...config.DeclaredApp) *fixture {
	return newFixtureWith(t, enabled, nil, declared...)
}

func newFixtureWith(t *testing.T, enabled bool, proxies []string, declared ...config.DeclaredApp) *fixture {
	env := apptest.New(t, declared...)
	app := env.Server(func(d *server.Deps) {
		d.Server.TrustedProxies = proxies
		d.Admin = admin.New(env.Apps, env.Store, adminToken, admin.Options{})
		d.Console = server.ConsoleSettings{Enabled: enabled, Version: "test", DataFile: env.Store.Path()}
	})
	return &fixture{env: env, app: app}
}

// form posts a form (with optional cookie and extra headers).
func (f *fixture) form(t *testing.T, path, cookie string, values url.Values, hdr ...string) apptest.Response {
	t.Helper()
	h := []string{"Content-Type", "application/x-www-form-urlencoded"}
	if cookie != "" {
		h = append(h, "Cookie", cookie)
	}
	return apptest.Do(t, f.app, http.MethodPost, path, values.Encode(), append(h, hdr...)...)
}

func (f *fixture) get(t *testing.T, path, cookie string) apptest.Response {
	t.Helper()
	if cookie == "" {
		return apptest.Do(t, f.app, http.MethodGet, path, nil)
	}
	return apptest.Do(t, f.app, http.MethodGet, path, nil, "Cookie", cookie)
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// signIn returns the session cookie and the CSRF token of a fresh session.
func (f *fixture) signIn(t *testing.T) (cookie, csrf string) {
	t.Helper()
	r := f.form(t, "/console/login", "", url.Values{"token": {adminToken}})
	require.Equal(t, http.StatusSeeOther, r.Status, string(r.Body))
	set := r.Header.Get("Set-Cookie")
	require.Contains(t, set, "HttpOnly")
	require.Contains(t, strings.ToLower(set), "samesite=strict")
	require.Contains(t, set, "path=/console")
	require.NotContains(t, set, "secure", "no Secure flag over plain HTTP (the browser would drop the cookie)")
	cookie = strings.SplitN(set, ";", 2)[0]
	page := f.get(t, "/console/apps", cookie)
	require.Equal(t, http.StatusOK, page.Status)
	m := csrfField.FindSubmatch(page.Body)
	require.NotNil(t, m, "the page carries a CSRF token")
	return cookie, string(m[1])
}

func TestConsoleOffAnswersNotFound(t *testing.T) {
	t.Parallel()
	f := newFixture(t, false)
	r := f.get(t, "/console/login", "")
	require.Equal(t, http.StatusNotFound, r.Status)
	require.Equal(t, "not_found", r.ErrorCode(t))
}

func TestWrongTokenIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	for _, tok := range []string{"", "wrong", adminToken[:10], adminToken + "x"} {
		r := f.form(t, "/console/login", "", url.Values{"token": {tok}})
		require.Equal(t, http.StatusUnauthorized, r.Status, tok)
		require.Empty(t, r.Header.Get("Set-Cookie"), tok)
		require.Contains(t, string(r.Body), "Wrong admin token")
	}
	// Without a session every page sends the browser to the sign-in page, and every form fails.
	r := f.get(t, "/console/apps", "")
	require.Equal(t, http.StatusSeeOther, r.Status)
	require.Equal(t, "/console/login", r.Header.Get("Location"))
	r = f.form(t, "/console/apps", "idvault_console=made-up", url.Values{"name": {"x"}, "csrf": {"x"}})
	require.Equal(t, http.StatusUnauthorized, r.Status)
	list, err := f.env.Apps.List()
	require.NoError(t, err)
	require.Empty(t, list)
}

// A token pasted with a space or a newline around it signs in, as it does on the admin API,
// instead of being refused and counted as a wrong token.
func TestPastedTokenWithSpacesSignsIn(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	for _, tok := range []string{adminToken + " ", " " + adminToken, adminToken + "\r\n"} {
		r := f.form(t, "/console/login", "", url.Values{"token": {tok}})
		require.Equal(t, http.StatusSeeOther, r.Status, "%q", tok)
		require.Equal(t, "/console/apps", r.Header.Get("Location"))
	}
}

// Form fields come from the body only: the admin token in a URL (kept by proxies, history and
// Referer) does not sign in, and a link's query cannot fill in a form (fiber's FormValue read
// the query string first).
func TestFormFieldsInTheURLAreNotRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	r := f.form(t, "/console/login?token="+url.QueryEscape(adminToken), "", url.Values{})
	require.Equal(t, http.StatusUnauthorized, r.Status)
	require.Empty(t, r.Header.Get("Set-Cookie"))

	cookie, csrf := f.signIn(t)
	r = f.form(t, "/console/apps?name=fromurl&csrf="+url.QueryEscape(csrf), cookie, url.Values{"csrf": {csrf}})
	require.NotEqual(t, http.StatusSeeOther, r.Status, "no app from the URL's name")
	r = f.form(t, "/console/apps?csrf="+url.QueryEscape(csrf), cookie, url.Values{"name": {"x"}})
	require.Equal(t, http.StatusForbidden, r.Status, "the CSRF token must be in the form")
	list, err := f.env.Apps.List()
	require.NoError(t, err)
	require.Empty(t, list)
}

// A form without the session's CSRF token, or from another site, changes nothing.
func TestFormsNeedTheCSRFTokenAndThisOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	cases := map[string]struct {
		values url.Values
		hdr    []string
	}{
		"no csrf":        {url.Values{"name": {"a"}}, nil},
		"wrong csrf":     {url.Values{"name": {"a"}, "csrf": {csrf[:len(csrf)-1] + "x"}}, nil},
		"other origin":   {url.Values{"name": {"a"}, "csrf": {csrf}}, []string{"Origin", "http://evil.example"}},
		"opaque origin":  {url.Values{"name": {"a"}, "csrf": {csrf}}, []string{"Origin", "null"}},
		"other referrer": {url.Values{"name": {"a"}, "csrf": {csrf}}, []string{"Referer", "http://evil.example/x"}},
	}
	for name, c := range cases {
		r := f.form(t, "/console/apps", cookie, c.values, c.hdr...)
		require.Equal(t, http.StatusForbidden, r.Status, name)
	}
	list, err := f.env.Apps.List()
	require.NoError(t, err)
	require.Empty(t, list, "nothing was created")

	r := f.form(t, "/console/apps", cookie, url.Values{"name": {"ok"}, "csrf": {csrf}}, "Origin", "http://example.com")
	require.Equal(t, http.StatusSeeOther, r.Status, "the same form with its token from this origin works")
	list, err = f.env.Apps.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	require.False(t, list[0].Test)
}

// Pages read without JavaScript: the data is in the HTML; the secret is shown once and never
// reaches a URL or the log.
func TestCreateShowsTheSecretOnceAndNeverLogsIt(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	r := f.form(t, "/console/apps", cookie, url.Values{"name": {"shop"}, "test": {"on"}, "legacy_errors": {"on"}, "csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, r.Status)
	loc := r.Header.Get("Location")
	list, err := f.env.Apps.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
	v := admin.ViewOf(list[0])
	require.Equal(t, "/console/apps/"+v.URLID+"/secret", loc)
	require.True(t, v.Test)
	require.True(t, v.LegacyErrors)
	require.False(t, v.RegisteredUsersOnly)

	page := f.get(t, loc, cookie)
	require.Equal(t, http.StatusOK, page.Status)
	secretM := regexp.MustCompile(`id="app-secret" class="secret" readonly value="([^"]+)"`).FindSubmatch(page.Body)
	tokenM := regexp.MustCompile(`id="auth-token" class="secret" readonly value="([^"]+)"`).FindSubmatch(page.Body)
	require.NotNil(t, secretM)
	require.NotNil(t, tokenM)
	secret, token := html.UnescapeString(string(secretM[1])), html.UnescapeString(string(tokenM[1]))
	require.Len(t, secret, 88, "the 64-byte secret in base64")
	require.Contains(t, string(page.Body), "Shown once")
	require.Equal(t, "no-store", page.Header.Get("Cache-Control"), "the page with the secret is not cached")
	require.Contains(t, page.Header.Get("Content-Security-Policy"), "script-src 'self'")

	again := f.get(t, loc, cookie)
	require.Equal(t, http.StatusGone, again.Status)
	require.NotContains(t, html.UnescapeString(string(again.Body)), secret)

	apps := html.UnescapeString(string(f.get(t, "/console/apps", cookie).Body))
	require.Contains(t, apps, v.ID)
	require.Contains(t, apps, v.URLID)
	require.NotContains(t, apps, token)

	logs := f.env.LogBuf.String()
	require.NotContains(t, logs, secret)
	require.NotContains(t, logs, token)
	require.NotContains(t, logs, adminToken)
}

// The secret page of another app (a stale tab reloaded) does not use up the pending reveal:
// the new app's secret, which cannot be shown again, used to be thrown away.
func TestSecretPageOfAnotherAppKeepsThePendingSecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	first := f.form(t, "/console/apps", cookie, url.Values{"name": {"first"}, "csrf": {csrf}}).Header.Get("Location")
	require.Equal(t, http.StatusOK, f.get(t, first, cookie).Status)
	second := f.form(t, "/console/apps", cookie, url.Values{"name": {"second"}, "csrf": {csrf}}).Header.Get("Location")
	require.NotEqual(t, first, second)

	require.Equal(t, http.StatusGone, f.get(t, first, cookie).Status, "the first app's secret was shown already")
	page := f.get(t, second, cookie)
	require.Equal(t, http.StatusOK, page.Status, "the second app's secret is still there: %s", page.Body)
	require.Regexp(t, `id="app-secret" class="secret" readonly value="[^"]+"`, string(page.Body))
	require.Equal(t, http.StatusGone, f.get(t, second, cookie).Status, "and shown once")
}

// Declared apps are read-only in the console as in the admin API.
func TestDeclaredAppIsReadOnly(t *testing.T) {
	t.Parallel()
	secret := "cTMoGGUKhwN47ypq4xAXAtVkNWeyUtMltQnYwJhxWYSvqjPVGmXd2wwa7y17QtPTZhn8bxb015CZC/e4ZI7+MQ=="
	f := newFixture(t, true, config.DeclaredApp{Name: "declared", Secret: secret, AuthToken: "declared-token-0123456789", Test: true})
	cookie, csrf := f.signIn(t)
	const id = "tpoxyNzh0hU9G2i9agMvHyyd-pO6zGCjO9BfhrCLjd4"
	page := f.get(t, "/console/apps/"+id, cookie)
	require.Equal(t, http.StatusOK, page.Status)
	require.Contains(t, string(page.Body), "declared in config")
	require.NotContains(t, string(page.Body), `id="rotate"`)
	for _, action := range []string{"/rotate", "/options"} {
		r := f.form(t, "/console/apps/"+id+action, cookie, url.Values{"csrf": {csrf}, "legacy_errors": {"on"}})
		require.Equal(t, http.StatusConflict, r.Status, action)
		require.Contains(t, string(r.Body), "app_is_declared")
	}
	r := f.form(t, "/console/apps/"+id+"/delete", cookie, url.Values{"csrf": {csrf}, "confirm": {"declared"}})
	require.Equal(t, http.StatusConflict, r.Status)
}

func TestDeleteNeedsTheNameTyped(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	c := f.env.CreateApp(t, false)
	v := admin.ViewOf(c.App)
	r := f.form(t, "/console/apps/"+v.URLID+"/delete", cookie, url.Values{"csrf": {csrf}, "confirm": {"not the name"}})
	require.Equal(t, http.StatusBadRequest, r.Status)
	_, err := f.env.Apps.Get(c.App.ID)
	require.NoError(t, err, "still there")
	r = f.form(t, "/console/apps/"+v.URLID+"/delete", cookie, url.Values{"csrf": {csrf}, "confirm": {v.Name}})
	require.Equal(t, http.StatusSeeOther, r.Status)
	_, err = f.env.Apps.Get(c.App.ID)
	require.Error(t, err, "deleted")
}

func TestSignOutEndsTheSession(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	r := f.form(t, "/console/logout", cookie, url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, r.Status)
	require.Contains(t, r.Header.Get("Set-Cookie"), "expires=Thu, 01 Jan 1970", "the browser drops the cookie")
	r = f.get(t, "/console/apps", cookie)
	require.Equal(t, http.StatusSeeOther, r.Status, "the old cookie opens nothing")

	// Signing out of a session that already ended (expired, or a restart) signs out: the
	// cookie is dropped and the sign-in page follows, instead of a 401 page saying "sign in and
	// try again" with the dead cookie kept.
	r = f.form(t, "/console/logout", cookie, url.Values{"csrf": {csrf}})
	require.Equal(t, http.StatusSeeOther, r.Status, "body: %s", r.Body)
	require.Equal(t, "/console/login", r.Header.Get("Location"))
	require.Contains(t, r.Header.Get("Set-Cookie"), "expires=Thu, 01 Jan 1970")
}

func TestServerAndAPIPages(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, _ := f.signIn(t)
	r := f.get(t, "/console/server", cookie)
	require.Equal(t, http.StatusOK, r.Status)
	require.Contains(t, string(r.Body), f.env.Store.Path())
	require.Contains(t, string(r.Body), "/console/backup")
	b := f.get(t, "/console/backup", cookie)
	require.Equal(t, http.StatusOK, b.Status)
	require.Contains(t, b.Header.Get("Content-Disposition"), "attachment")
	require.NotEmpty(t, b.Body)
	a := f.get(t, "/console/api", cookie)
	require.Equal(t, http.StatusOK, a.Status)
	for _, route := range []string{"POST /admin/apps", "GET /apps/{app_id}/private_identity", "POST /verification/email/verify", "PATCH /identity"} {
		require.Contains(t, string(a.Body), route)
	}
	require.Contains(t, string(a.Body), `href="/openapi.json"`)
}

// Behind a trusted TLS proxy the session cookie is Secure; a forged X-Forwarded-Proto from any
// other peer changes nothing.
func TestCookieSecureBehindTrustedTLSProxy(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		proxies []string
		secure  bool
	}{"trusted proxy": {[]string{"0.0.0.0/8"}, true}, "untrusted peer": {[]string{"10.9.9.9"}, false}} {
		f := newFixtureWith(t, true, c.proxies)
		r := f.form(t, "/console/login", "", url.Values{"token": {adminToken}}, "X-Forwarded-Proto", "https")
		require.Equal(t, http.StatusSeeOther, r.Status, name)
		require.Equal(t, c.secure, strings.Contains(strings.ToLower(r.Header.Get("Set-Cookie")), "; secure"), "%s: %s", name, r.Header.Get("Set-Cookie"))
	}
}

// Behind a trusted TLS proxy that passes requests on to idvault's own address (nginx's default
// Host is the upstream's), the browser's forms come from the host the proxy forwards in
// X-Forwarded-Host: sign-in works, and the "Try it" commands name the address the browser
// used, https included. From any other peer those headers change nothing.
func TestConsoleBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	withFakeAuth := func(t *testing.T, proxies []string) *fixture {
		env := apptest.New(t)
		app := env.Server(func(d *server.Deps) {
			d.Server.TrustedProxies = proxies
			d.Admin = admin.New(env.Apps, env.Store, adminToken, admin.Options{})
			d.Console = server.ConsoleSettings{Enabled: true, Version: "test", DataFile: env.Store.Path()}
			d.FakeAuth = fakeauth.New(env.Apps, env.Dir, config.FakeAuth{Enabled: true}, env.Prom, env.Log)
		})
		return &fixture{env: env, app: app}
	}
	proxied := []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "console.example.org", "Origin", "https://console.example.org"}
	page := func(t *testing.T, f *fixture, cookie string) (string, admin.AppView) {
		v := admin.ViewOf(f.env.CreateApp(t, true).App)
		r := apptest.Do(t, f.app, http.MethodGet, "/console/apps/"+v.URLID, nil, append([]string{"Cookie", cookie}, proxied[:4]...)...)
		require.Equal(t, http.StatusOK, r.Status)
		return html.UnescapeString(string(r.Body)), v
	}

	f := withFakeAuth(t, []string{"0.0.0.0/8"})
	r := f.form(t, "/console/login", "", url.Values{"token": {adminToken}}, proxied...)
	require.Equal(t, http.StatusSeeOther, r.Status, "sign-in through the proxy: %s", r.Body)
	body, v := page(t, f, strings.SplitN(r.Header.Get("Set-Cookie"), ";", 2)[0])
	require.Contains(t, body, `curl -s "https://console.example.org/apps/`+v.URLID+`/private_identity`)
	require.Contains(t, body, `url: 'https://console.example.org'`)
	require.NotContains(t, body, "example.com/")

	// A forwarded host that is not a plain host name is no origin, and never reaches the
	// commands (they are shell commands).
	odd := []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "x$(id)", "Origin", "https://x$(id)"}
	require.Equal(t, http.StatusForbidden, f.form(t, "/console/login", "", url.Values{"token": {adminToken}}, odd...).Status)
	r = apptest.Do(t, f.app, http.MethodGet, "/console/apps/"+v.URLID, nil, append([]string{"Cookie", strings.SplitN(r.Header.Get("Set-Cookie"), ";", 2)[0]}, odd[:4]...)...)
	require.Equal(t, http.StatusOK, r.Status)
	require.NotContains(t, html.UnescapeString(string(r.Body)), "$(id)")
	require.Contains(t, html.UnescapeString(string(r.Body)), `curl -s "https://example.com/apps/`+v.URLID)

	// From an untrusted peer the forwarded host is no origin of this console, and the commands
	// keep the Host the request came with.
	f = withFakeAuth(t, []string{"10.9.9.9"})
	r = f.form(t, "/console/login", "", url.Values{"token": {adminToken}}, proxied...)
	require.Equal(t, http.StatusForbidden, r.Status)
	cookie, _ := f.signIn(t)
	body, v = page(t, f, cookie)
	require.Contains(t, body, `curl -s "http://example.com/apps/`+v.URLID+`/private_identity`)
	require.NotContains(t, body, "console.example.org")
}

// The static directory itself is no page: the console's 404, not a JSON "invalid_body" for a
// GET that has no body. Nothing outside it is served.
func TestStaticDirectoryAndTraversal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	for _, path := range []string{"/console/static", "/console/static/", "/console/static/../templates/login.html",
		"/console/static/%2e%2e/templates/login.html", "/console/static/..%2ftemplates%2flogin.html", "/console/static/templates/login.html"} {
		r := f.get(t, path, "")
		require.Equal(t, http.StatusNotFound, r.Status, path)
		require.Contains(t, r.Header.Get("Content-Type"), "text/html", path)
		require.Contains(t, string(r.Body), "There is no such page in the console.", path)
		require.NotContains(t, string(r.Body), "{{define", path)
	}
	r := f.get(t, "/console/static/style.css", "")
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, "nosniff", r.Header.Get("X-Content-Type-Options"))
}

// Every form that changes something refuses a post without the session's CSRF token, with a
// forged one, or from another site (another host, another port of this one, an opaque
// origin), and changes nothing: the app keeps its token, options and existence, and the
// session stays signed in.
func TestEveryChangeNeedsTheCSRFTokenAndThisOrigin(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	c := f.env.CreateApp(t, true)
	v := admin.ViewOf(c.App)
	routes := map[string]url.Values{
		"/console/apps":                         {"name": {"forged"}, "test": {"on"}},
		"/console/apps/" + v.URLID + "/options": {"legacy_errors": {"on"}},
		"/console/apps/" + v.URLID + "/rotate":  {},
		"/console/apps/" + v.URLID + "/delete":  {"confirm": {v.Name}},
		"/console/logout":                       {},
	}
	attempts := map[string]struct {
		csrf string
		hdr  []string
	}{
		"no token":      {"", nil},
		"forged token":  {"A" + csrf[1:], nil},
		"other site":    {csrf, []string{"Origin", "http://evil.example"}},
		"other port":    {csrf, []string{"Origin", "http://example.com:8081"}},
		"opaque origin": {csrf, []string{"Origin", "null"}},
		"other referer": {csrf, []string{"Referer", "http://example.com.evil.example/console/apps"}},
	}
	for path, values := range routes {
		for name, a := range attempts {
			form := url.Values{}
			for k, v := range values {
				form[k] = v
			}
			if a.csrf != "" {
				form.Set("csrf", a.csrf)
			}
			r := f.form(t, path, cookie, form, a.hdr...)
			require.Equal(t, http.StatusForbidden, r.Status, "%s, %s", path, name)
		}
	}
	list, err := f.env.Apps.List()
	require.NoError(t, err)
	require.Len(t, list, 1, "nothing created or deleted")
	require.True(t, apps.CheckToken(list[0], c.AuthToken), "the token was not rotated")
	require.False(t, list[0].Options.LegacyErrors, "the options were not changed")
	require.Equal(t, http.StatusOK, f.get(t, "/console/apps", cookie).Status, "still signed in")
}

// The create form sent twice (a double click): the browser follows the second post, which
// the name refuses, and the first app's secret, which can never be shown again, was lost with
// it. The second post now leads to that secret, shown once; only then is the name refused.
func TestCreateFormSentTwiceShowsTheSecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	form := url.Values{"name": {"shop"}, "test": {"on"}, "csrf": {csrf}}
	first := f.form(t, "/console/apps", cookie, form)
	require.Equal(t, http.StatusSeeOther, first.Status) // the browser never follows this one
	second := f.form(t, "/console/apps", cookie, form)
	require.Equal(t, http.StatusSeeOther, second.Status, "body: %s", second.Body)
	require.Equal(t, first.Header.Get("Location"), second.Header.Get("Location"))
	page := f.get(t, second.Header.Get("Location"), cookie)
	require.Equal(t, http.StatusOK, page.Status)
	require.Regexp(t, `id="app-secret" class="secret" readonly value="[^"]+"`, string(page.Body))

	third := f.form(t, "/console/apps", cookie, url.Values{"name": {"SHOP"}, "csrf": {csrf}})
	require.Equal(t, http.StatusConflict, third.Status, "once shown, the name is refused as before")
	require.Contains(t, string(third.Body), "app_name_taken")
	list, err := f.env.Apps.List()
	require.NoError(t, err)
	require.Len(t, list, 1)
}

// The GETs that do something refuse a request another site's page made (the browser says so in
// Sec-Fetch-Site; "same-site" covers a page on another port of this host, to which the
// SameSite=Strict cookie still goes): the secret waiting to be shown is not used up, and no
// backup is made. The console's own links, a typed address and clients without the header pass.
func TestActionGETsRefuseOtherSites(t *testing.T) {
	t.Parallel()
	f := newFixture(t, true)
	cookie, csrf := f.signIn(t)
	loc := f.form(t, "/console/apps", cookie, url.Values{"name": {"shop"}, "csrf": {csrf}}).Header.Get("Location")
	for _, site := range []string{"cross-site", "same-site"} {
		r := apptest.Do(t, f.app, http.MethodGet, loc, nil, "Cookie", cookie, "Sec-Fetch-Site", site)
		require.Equal(t, http.StatusForbidden, r.Status, site)
		require.NotContains(t, string(r.Body), "app-secret", site)
		b := apptest.Do(t, f.app, http.MethodGet, "/console/backup", nil, "Cookie", cookie, "Sec-Fetch-Site", site)
		require.Equal(t, http.StatusForbidden, b.Status, site)
		require.Empty(t, b.Header.Get("Content-Disposition"), site)
	}
	r := apptest.Do(t, f.app, http.MethodGet, loc, nil, "Cookie", cookie, "Sec-Fetch-Site", "same-origin")
	require.Equal(t, http.StatusOK, r.Status, "the secret is still there for the console's own request")
	require.Regexp(t, `id="app-secret" class="secret" readonly value="[^"]+"`, string(r.Body))
	for _, site := range []string{"same-origin", "none", ""} {
		hdr := []string{"Cookie", cookie}
		if site != "" {
			hdr = append(hdr, "Sec-Fetch-Site", site)
		}
		b := apptest.Do(t, f.app, http.MethodGet, "/console/backup", nil, hdr...)
		require.Equal(t, http.StatusOK, b.Status, "%q", site)
		require.Contains(t, b.Header.Get("Content-Disposition"), "attachment", "%q", site)
	}
}
