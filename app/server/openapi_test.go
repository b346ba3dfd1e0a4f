package server_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/openapi"
)

// The document and the router list the same operations: a route added without its description
// (or a description of a route that is gone) fails here.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	doc, err := apptest.LoadAPIDoc()
	require.NoError(t, err)
	doc.RequireSameOperations(t, apptest.New(t).Server(nil))
}

// Every code of the catalogue is in the document, both in the code list and in the answers of
// at least one operation (or, for not_found and method_not_allowed, as the answer of any path).
func TestOpenAPIListsEveryCatalogueCode(t *testing.T) {
	t.Parallel()
	doc, err := apptest.LoadAPIDoc()
	require.NoError(t, err)
	doc.RequireEveryCode(t, apierr.Catalog)
}

func TestOpenAPIIsServed(t *testing.T) {
	t.Parallel()
	app := apptest.New(t).Server(nil)
	r := apptest.Do(t, app, http.MethodGet, "/openapi.json", nil)
	require.Equal(t, http.StatusOK, r.Status)
	require.Equal(t, openapi.JSON, r.Body)
	var v struct {
		OpenAPI string `json:"openapi"`
	}
	require.NoError(t, json.Unmarshal(r.Body, &v))
	require.Equal(t, "3.1.0", v.OpenAPI)
}

// The check itself fails on an answer the document does not allow, naming the route.
func TestOpenAPICheckRejectsDrift(t *testing.T) {
	t.Parallel()
	doc, err := apptest.LoadAPIDoc()
	require.NoError(t, err)
	req := mustReq(t, "http://x/admin/apps")
	req.Header.Set("Authorization", "Bearer some-token")
	json := http.Header{"Content-Type": {"application/json"}}
	for name, x := range map[string]apptest.Exchange{
		"undocumented status":  {Request: req, Status: http.StatusTeapot, Header: json, Body: []byte(`{}`)},
		"wrong body":           {Request: req, Status: 200, Header: json, Body: []byte(`{"apps": [{"id": 1}]}`)},
		"code not listed":      {Request: req, Status: 404, Header: json, Body: []byte(`{"error": {"status": 404, "code": "user_not_found", "message": "m", "trace_id": "t"}}`)},
		"unknown path success": {Request: mustReq(t, "http://x/nowhere"), Status: 200, Header: json, Body: []byte(`{"error": {"status": 200, "code": "not_found", "message": "m", "trace_id": "t"}}`)},
	} {
		err := doc.Check(x)
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "GET /", name)
	}
	ok := apptest.Exchange{Request: req, Status: 200, Header: json, Body: []byte(`{"apps": []}`)}
	require.NoError(t, doc.Check(ok))
}

func mustReq(t *testing.T, url string) *http.Request {
	r, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return r
}
