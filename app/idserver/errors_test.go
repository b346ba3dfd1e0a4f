package idserver_test

import (
	"bufio"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/idserver"
	"github.com/idvault/idvault/app/server"
)

// requireError checks an identity-server error answer: the code's status and exactly
// {"error": message, "code": code}, JSON.
func requireError(t *testing.T, resp apptest.Response, code apierr.Code, message string) {
	t.Helper()
	require.Equal(t, code.Status, resp.Status, "body: %s", resp.Body)
	require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
	want, err := json.Marshal(map[string]string{"error": message, "code": code.Name})
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(resp.Body))
}

func TestErrors(t *testing.T) {
	t.Parallel()
	for mode, fixture := range conformanceModes(t, false) {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			testErrors(t, fixture(t))
		})
	}
}

func testErrors(t *testing.T, f *fixture) {
	routes := []struct{ method, path string }{
		{http.MethodPost, "/identity"}, {http.MethodPatch, "/identity"}, {http.MethodPost, "/public_identity"},
	}
	bodies := map[string]struct {
		body    any
		headers []string
		code    apierr.Code
		message string
	}{
		"email missing":       {`{}`, nil, apierr.NoEmailProvided, "no email provided"},
		"email empty":         {`{"email": ""}`, nil, apierr.NoEmailProvided, "no email provided"},
		"email blank":         {`{"email": "  "}`, nil, apierr.NoEmailProvided, "no email provided"},
		"email null":          {`{"email": null}`, nil, apierr.NoEmailProvided, "no email provided"},
		"email a number":      {`{"email": 5}`, nil, apierr.NoEmailProvided, "no email provided"},
		"email a bool":        {`{"email": true}`, nil, apierr.NoEmailProvided, "no email provided"},
		"email an object":     {`{"email": {"a": "b@example.com"}}`, nil, apierr.NoEmailProvided, "no email provided"},
		"email an array":      {`{"email": ["a@example.com"]}`, nil, apierr.NoEmailProvided, "no email provided"},
		"Email capitalised":   {`{"Email": "a@example.com"}`, nil, apierr.NoEmailProvided, "no email provided"},
		"body malformed JSON": {`{"email": "a@example.com"`, nil, apierr.NoEmailProvided, "no email provided"},
		"body a JSON array":   {`[{"email": "a@example.com"}]`, nil, apierr.NoEmailProvided, "no email provided"},
		"body a JSON string":  {`"a@example.com"`, nil, apierr.NoEmailProvided, "no email provided"},
		"body JSON null":      {`null`, nil, apierr.NoEmailProvided, "no email provided"},
		"body empty, JSON":    {nil, []string{"Content-Type", "application/json"}, apierr.NoEmailProvided, "no email provided"},
		// Without a token, only application/json is read: a cross-site form cannot drive it.
		"body empty, no type": {nil, nil, apierr.UnsupportedMediaType, "Content-Type must be application/json"},
		"body form-encoded":   {"email=a%40example.com", []string{"Content-Type", "application/x-www-form-urlencoded"}, apierr.UnsupportedMediaType, "Content-Type must be application/json"},
		"JSON sent as text":   {`{"email": "a@example.com"}`, []string{"Content-Type", "text/plain"}, apierr.UnsupportedMediaType, "Content-Type must be application/json"},
		"JSON with charset":   {`{"email": "not-an-email"}`, []string{"Content-Type", "application/json; charset=utf-8"}, apierr.InvalidEmailIS, "invalid email"},
		"not an address":      {`{"email": "not-an-email"}`, nil, apierr.InvalidEmailIS, "invalid email"},
		"display name":        {`{"email": "Bob <bob@example.com>"}`, nil, apierr.InvalidEmailIS, "invalid email"},
		"two addresses":       {`{"email": "a@example.com, b@example.com"}`, nil, apierr.InvalidEmailIS, "invalid email"},
		"over 254 bytes":      {`{"email": "` + strings.Repeat("a", 250) + `@example.com"}`, nil, apierr.InvalidEmailIS, "invalid email"},
		"control character":   {`{"email": "a\u0000b@example.com"}`, nil, apierr.InvalidEmailIS, "invalid email"},
		"no domain":           {`{"email": "a@"}`, nil, apierr.InvalidEmailIS, "invalid email"},
		// The second value used to win silently, whatever the app had checked in the first.
		"email given twice": {`{"email": "a@example.com", "email": "victim@example.com"}`, nil, apierr.InvalidEmailIS, `invalid email: the key "email" is given twice`},
	}
	var auth []string
	if f.token != "" {
		auth = []string{"Authorization", "Bearer " + f.token}
	}
	for _, r := range routes {
		for name, c := range bodies {
			if c.code == apierr.UnsupportedMediaType && f.token != "" {
				continue // with a token every Content-Type is read as JSON
			}
			t.Run(r.method+" "+r.path+"/"+name, func(t *testing.T) {
				resp := apptest.Do(t, f.http, r.method, r.path, c.body, append(slices.Clone(c.headers), auth...)...)
				requireError(t, resp, c.code, c.message)
			})
		}
	}
	t.Run("PATCH unknown user", func(t *testing.T) {
		resp := apptest.Do(t, f.http, http.MethodPatch, "/identity", `{"email": "nobody@example.com"}`, auth...)
		requireError(t, resp, apierr.UnknownUser, "unknown user")
	})
	n, err := f.env.Store.CountRecords(f.app.ID)
	require.NoError(t, err)
	require.Zero(t, n, "no error created a record")
}

// Unknown keys are ignored, even given twice: only a second "email" is refused.
func TestRepeatedUnknownKeyIsIgnored(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	resp := f.do(t, http.MethodPost, "/public_identity", `{"x": 1, "x": 2, "Email": "z", "email": "a@example.com", "Email": "y"}`)
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
}

// Wrong routes, methods and oversized bodies still answer JSON, never HTML.
func TestErrorsAreJSON(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, c := range map[string]struct {
		method, path string
		body         any
		status       int
	}{
		"GET /identity":   {http.MethodGet, "/identity", nil, 405},
		"DELETE identity": {http.MethodDelete, "/identity", nil, 405},
		// The paths as the router serves them too (any case, a trailing slash), even when no
		// route ran: the client of a base URL written "/Identity/" parses the same shape.
		"GET /Identity/":                         {http.MethodGet, "/Identity/", nil, 405},
		"PUT /PUBLIC_IDENTITY":                   {http.MethodPut, "/PUBLIC_IDENTITY", nil, 405},
		"body over the limit, /Identity/":        {http.MethodPost, "/Identity/", `{"email":"a@example.com","pad":"` + strings.Repeat("x", 2<<20) + `"}`, 413},
		"body over the limit, /public_identity/": {http.MethodPost, "/public_identity/", `{"email":"a@example.com","pad":"` + strings.Repeat("x", 2<<20) + `"}`, 413},
	} {
		t.Run(name, func(t *testing.T) {
			resp := apptest.Do(t, f.http, c.method, c.path, c.body)
			require.Equal(t, c.status, resp.Status, "body: %.300s", resp.Body)
			require.Contains(t, resp.Header.Get("Content-Type"), "application/json")
			var b map[string]string
			resp.JSON(t, &b) // {"error": "<message>", "code": "<code>"}: error a string, as the identity server's clients parse
			require.NotEmpty(t, b["error"], "body: %s", resp.Body)
			require.Contains(t, []string{apierr.MethodNotAllowed.Name, apierr.BodyTooLarge.Name}, b["code"], "body: %s", resp.Body)
			require.Len(t, b, 2)
		})
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	const token = "s3cret-token-of-32-characters-xx"
	f := newFixture(t, func(c *config.IdentityServer) { c.Token = token })
	for name, c := range map[string]struct {
		auth   string
		status int
	}{
		"missing":              {"", 401},
		"wrong token":          {"Bearer wrong-token-of-32-characters-xx", 401},
		"token prefix":         {"Bearer " + token[:16], 401},
		"token plus more":      {"Bearer " + token + "x", 401},
		"wrong scheme":         {"Basic " + token, 401},
		"no scheme":            {token, 401},
		"scheme only":          {"Bearer", 401},
		"right":                {"Bearer " + token, 200},
		"scheme in lower case": {"bearer " + token, 200},
	} {
		t.Run(name, func(t *testing.T) {
			for _, r := range []struct{ method, path string }{
				{http.MethodPost, "/identity"}, {http.MethodPost, "/public_identity"}, {http.MethodPatch, "/identity"},
			} {
				var h []string
				if c.auth != "" {
					h = []string{"Authorization", c.auth}
				}
				resp := apptest.Do(t, f.http, r.method, r.path, `{"email": "tok@example.com"}`, h...)
				if c.status == 401 {
					requireError(t, resp, apierr.Unauthorized, "unauthorized")
					require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")
				} else {
					require.Equal(t, 200, resp.Status, "%s %s: %s", r.method, r.path, resp.Body)
				}
			}
		})
	}
	// Authentication comes first: a bad body without a token is 401, not 400.
	resp := apptest.Do(t, f.http, http.MethodPost, "/identity", `not json`)
	requireError(t, resp, apierr.Unauthorized, "unauthorized")
}

func TestNoTokenConfiguredNeedsNone(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	resp := apptest.Do(t, f.http, http.MethodPost, "/identity", `{"email": "open@example.com"}`, "Authorization", "Bearer anything")
	require.Equal(t, http.StatusOK, resp.Status, "body: %s", resp.Body)
	f.keep(resp.Map(t)["serviceIdentity"].(string))
}

func TestFeatureNotEnabled(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	app := env.Server(nil)
	for _, r := range []struct{ method, path string }{
		{http.MethodPost, "/identity"}, {http.MethodPatch, "/identity"}, {http.MethodPost, "/public_identity"},
	} {
		resp := apptest.Do(t, app, r.method, r.path, `{"email": "a@example.com"}`)
		requireError(t, resp, apierr.FeatureNotEnabled, "this feature is not enabled on this server")
	}
}

// The configured app does not exist (yet): 503 with a JSON message naming the setting, and bad
// input is still 400.
func TestAppMissing(t *testing.T) {
	t.Parallel()
	env := apptest.New(t)
	id := make([]byte, 32)
	_, _ = rand.Read(id)
	app := env.Server(func(d *server.Deps) {
		d.IdentityServer = idserver.New(id, env.Apps, env.Dir, config.IdentityServer{Enabled: true, AppID: apps.FormatID(id)}, env.Prom, env.Log)
	})
	resp := apptest.Do(t, app, http.MethodPost, "/identity", `{"email": "a@example.com"}`)
	require.Equal(t, http.StatusServiceUnavailable, resp.Status)
	require.Contains(t, resp.Map(t)["error"], "identity_server.app_id")
	requireError(t, apptest.Do(t, app, http.MethodPost, "/identity", `{}`), apierr.NoEmailProvided, "no email provided")
}

// A store failure is a JSON 500 with a generic message; the cause is logged without secrets.
func TestInternalError(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.identity(t, "known@example.com")
	require.NoError(t, f.env.Store.Close())
	resp := f.do(t, http.MethodPost, "/identity", map[string]string{"email": "known@example.com"})
	requireError(t, resp, apierr.InternalError, "internal error; a retry may help")
	require.NotContains(t, string(resp.Body), r.ServiceIdentity)
	require.Contains(t, f.env.LogBuf.String(), "request failed")
}

// A body over server.body_limit is refused with a JSON error. Through a real listener (the
// in-memory test client refuses to send it), announcing the size and sending only the start,
// as the server answers before reading the rest.
func TestBodyOverLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	base, _ := apptest.Serve(t, f.http)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = fmt.Fprintf(conn, "POST /identity HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"email\": \"a@example.com\", \"pad\": \"xxxx", 2<<20)
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	requireError(t, apptest.Response{Status: resp.StatusCode, Header: resp.Header, Body: raw},
		apierr.BodyTooLarge, "the request body is too large")
}
