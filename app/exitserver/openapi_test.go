package exitserver_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/app/openapi"
)

// The exit document and the exit router list the same operations: a route added without its
// description (or a description of a route that is gone) fails here.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	doc, err := apptest.LoadExitAPIDoc()
	require.NoError(t, err)
	doc.RequireSameRoutes(t, exitserver.New(exitfake.New(), exitserver.Config{}).Routes())
}

// Every code of the exit catalogue is in the document's code list and, but for the answers of
// unknown routes, answered by an operation with an example.
func TestOpenAPIListsEveryExitCode(t *testing.T) {
	t.Parallel()
	doc, err := apptest.LoadExitAPIDoc()
	require.NoError(t, err)
	doc.RequireEveryCode(t, apierr.ExitCatalog)
}

// The document is public, like idvault serve's: no token needed even when the server has one.
// Unknown routes and methods answer catalogue errors the check accepts.
func TestOpenAPIIsServed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, exitserver.Config{Token: testToken})
	status, raw, hdr := f.do(t, "GET", "/openapi.json", "", nil)
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, openapi.ExitJSON, raw)
	require.Contains(t, hdr.Get("Content-Type"), "application/json")
	var v struct {
		OpenAPI string `json:"openapi"`
		Paths   map[string]any
	}
	require.NoError(t, json.Unmarshal(raw, &v))
	require.Equal(t, "3.1.0", v.OpenAPI)
	require.Contains(t, v.Paths, "/v1/decrypt")

	status, raw, _ = f.do(t, "GET", "/nowhere", testToken, nil)
	requireError(t, status, raw, 404, "not_found")
	status, raw, _ = f.do(t, "DELETE", "/v1/decrypt", testToken, nil)
	requireError(t, status, raw, 405, "method_not_allowed")
}

// The check itself fails on an answer the exit document does not allow, naming the route, and
// passes the same answers when they keep to it.
func TestOpenAPICheckRejectsDrift(t *testing.T) {
	t.Parallel()
	doc, err := apptest.LoadExitAPIDoc()
	require.NoError(t, err)
	req := func(method, path string) *http.Request {
		r, err := http.NewRequest(method, "http://x"+path, nil)
		require.NoError(t, err)
		r.Header.Set("Authorization", "Bearer "+testToken)
		return r
	}
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	with := func(h http.Header, kv ...string) http.Header {
		c := h.Clone()
		for i := 0; i+1 < len(kv); i += 2 {
			c.Set(kv[i], kv[i+1])
		}
		return c
	}
	errBody := func(status int, code, extra string) []byte {
		return []byte(`{"error": {"status": ` + strconv.Itoa(status) + `, "code": "` + code + `", "message": "m", "trace_id": "t"` + extra + `}}`)
	}
	entries := `, "entries": [{"index": 0, "reason": "the user is not in the dump"}]`
	bin := http.Header{"Content-Type": {"application/octet-stream"}}
	idsBody, ciphertext := []byte(`{"identities": ["aWRlbnRpdHk="]}`), []byte{11, 0, 1}
	decrypt, imp, ready := req("POST", "/v1/decrypt"), req("PUT", "/v1/identities"), req("GET", "/readyz")

	good := map[string]apptest.Exchange{
		"clear bytes":      {Request: decrypt, RequestBody: ciphertext, Status: 200, Header: bin},
		"import counts":    {Request: imp, RequestBody: idsBody, Status: 201, Header: jsonCT, Body: []byte(`{"imported": 1, "already_imported": 0}`)},
		"invalid_identity": {Request: imp, Status: 400, Header: jsonCT, Body: errBody(400, "invalid_identity", entries)},
		"invalid_body":     {Request: imp, Status: 400, Header: jsonCT, Body: errBody(400, "invalid_body", "")},
		"unauthorized":     {Request: ready, Status: 401, Header: with(jsonCT, "WWW-Authenticate", `Bearer realm="idvault exit"`), Body: errBody(401, "unauthorized", "")},
		"database down":    {Request: ready, Status: 503, Header: with(jsonCT, "Retry-After", "1"), Body: errBody(503, "database_unavailable", "")},
		"key_not_found":    {Request: decrypt, Status: 404, Header: jsonCT, Body: errBody(404, "key_not_found", "")},
	}
	for name, x := range good {
		require.NoError(t, doc.Check(x), name)
	}
	bad := map[string]apptest.Exchange{
		"undocumented status":            {Request: decrypt, Status: http.StatusTeapot, Header: jsonCT, Body: errBody(418, "internal_error", "")},
		"undocumented status of readyz":  {Request: ready, Status: 404, Header: jsonCT, Body: errBody(404, "not_found", "")},
		"clear bytes as JSON":            {Request: decrypt, RequestBody: ciphertext, Status: 200, Header: jsonCT, Body: []byte(`{}`)},
		"import counts wrong":            {Request: imp, RequestBody: idsBody, Status: 201, Header: jsonCT, Body: []byte(`{"imported": -1, "already_imported": 0}`)},
		"invalid_identity, no entries":   {Request: imp, Status: 400, Header: jsonCT, Body: errBody(400, "invalid_identity", "")},
		"entries on another code":        {Request: imp, Status: 400, Header: jsonCT, Body: errBody(400, "invalid_body", entries)},
		"code not listed for the status": {Request: imp, Status: 400, Header: jsonCT, Body: errBody(400, "unsupported_format", "")},
		"code of idvault serve":          {Request: decrypt, Status: 404, Header: jsonCT, Body: errBody(404, "app_not_found", "")},
		"401 without WWW-Authenticate":   {Request: ready, Status: 401, Header: jsonCT, Body: errBody(401, "unauthorized", "")},
		"503 without Retry-After":        {Request: ready, Status: 503, Header: jsonCT, Body: errBody(503, "database_unavailable", "")},
		"unknown path success":           {Request: req("GET", "/nowhere"), Status: 200, Header: jsonCT, Body: errBody(200, "not_found", "")},
	}
	for name, x := range bad {
		err := doc.Check(x)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "exit.json: "+x.Request.Method+" /", name)
		require.NotContains(t, err.Error(), "accepted a request", "%s fails for its answer", name)
	}
	// A request the server accepted must be valid for the document.
	err = doc.Check(apptest.Exchange{Request: imp, RequestBody: []byte(`{"identity": ["aWRlbnRpdHk="]}`), Status: 201, Header: jsonCT,
		Body: []byte(`{"imported": 1, "already_imported": 0}`)})
	require.ErrorContains(t, err, "the server accepted a request the document calls invalid")
}
