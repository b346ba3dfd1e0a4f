package apptest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/idvault/idvault/app/openapi"
)

// The OpenAPI check: every answer an HTTP test receives from idvault (through Do, or over the
// network from a server started with Start) is validated against app/openapi/openapi.json with
// kin-openapi, so the document cannot drift from the code; every answer the exit server's tests
// receive (through a client of ServeChecked) is validated the same way against
// app/openapi/exit.json. Rules:
//
//   - The answer must match its operation: a documented status (an undocumented one fails), its
//     content type, its body schema and its documented headers.
//   - A request that got a 2xx answer must itself be valid for the document (if the server
//     accepted it, the document must say it is acceptable). Requests answered with an error may be
//     invalid on purpose (tests send bad input), so they are not checked.
//   - A path the document does not know must answer a catalogue error body (not_found); a known
//     path with an undocumented method must answer a catalogue error (method_not_allowed).
//   - The console's HTML pages (/console/...) are a user interface, not part of the document.
//   - A binary answer (a media type the document gives no schema, such as the exit server's
//     decrypted streams) is checked at its headers (status, content type, documented headers)
//     and passes through unread, so a stream of any size is neither buffered nor slowed; a
//     request body sent as a stream is kept only up to 1 MiB (RequestBodyPartial beyond).

// APIDoc is a loaded document with its path templates, ready to check exchanges.
type APIDoc struct {
	Doc    *openapi3.T
	name   string // the file, for messages
	raw    []byte // the file's bytes
	ui     string // path prefix of HTML pages outside the document ("" for none)
	routes []docRoute
}

type docRoute struct {
	path     string   // template, e.g. /apps/{app_id}/private_identity
	segments []string // split on "/"
	item     *openapi3.PathItem
}

var (
	loadAPIDoc     = sync.OnceValues(func() (*APIDoc, error) { return loadDoc("openapi.json", openapi.JSON, "/console") })
	loadExitAPIDoc = sync.OnceValues(func() (*APIDoc, error) { return loadDoc("exit.json", openapi.ExitJSON, "") })
)

// LoadAPIDoc returns the document of `idvault serve` (app/openapi/openapi.json), loaded and
// validated once per process.
func LoadAPIDoc() (*APIDoc, error) { return loadAPIDoc() }

// LoadExitAPIDoc returns the document of the exit server (app/openapi/exit.json), loaded and
// validated once per process.
func LoadExitAPIDoc() (*APIDoc, error) { return loadExitAPIDoc() }

func loadDoc(name string, raw []byte, ui string) (*APIDoc, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: load: %w", name, err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("%s: invalid document: %w", name, err)
	}
	d := &APIDoc{Doc: doc, name: name, raw: raw, ui: ui}
	for path, item := range doc.Paths.Map() {
		d.routes = append(d.routes, docRoute{path: path, segments: strings.Split(path, "/"), item: item})
	}
	// Literal paths win over templated ones when both match.
	slices.SortFunc(d.routes, func(a, b docRoute) int { return strings.Count(a.path, "{") - strings.Count(b.path, "{") })
	return d, nil
}

// match finds the path template of an escaped URL path and its decoded parameters. Literal
// segments are matched as fiber's router matches them (CaseSensitive and StrictRouting off):
// in any case, with or without a trailing slash.
func (d *APIDoc) match(escaped string) (docRoute, map[string]string, bool) {
	if len(escaped) > 1 {
		escaped = strings.TrimSuffix(escaped, "/")
	}
	segs := strings.Split(escaped, "/")
	for _, r := range d.routes {
		if len(r.segments) != len(segs) {
			continue
		}
		params, ok := map[string]string{}, true
		for i, s := range r.segments {
			if name, isParam := strings.CutPrefix(s, "{"); isParam {
				v, err := url.PathUnescape(segs[i])
				if err != nil || v == "" {
					ok = false
					break
				}
				params[strings.TrimSuffix(name, "}")] = v
				continue
			}
			if !strings.EqualFold(s, segs[i]) {
				ok = false
				break
			}
		}
		if ok {
			return r, params, true
		}
	}
	return docRoute{}, nil, false
}

// Exchange is one request and the answer it got.
type Exchange struct {
	Request     *http.Request
	RequestBody []byte
	// RequestBodyPartial says RequestBody is only the start of the body (a stream sent while
	// the answer came): the body's content is then not checked.
	RequestBodyPartial bool
	Status             int
	Header             http.Header
	Body               []byte
}

// Check validates an exchange against the document; the error names the route and the problem.
func (d *APIDoc) Check(x Exchange) error {
	req := x.Request
	escaped := req.URL.EscapedPath()
	if d.ui != "" && (escaped == d.ui || strings.HasPrefix(escaped, d.ui+"/")) || req.Method == http.MethodHead || req.Method == http.MethodOptions {
		return nil
	}
	where := req.Method + " " + escaped
	fail := func(route, format string, args ...any) error {
		return fmt.Errorf("%s: %s (route %s) answered %d: %s\nbody: %.600s", d.name, where, route, x.Status, fmt.Sprintf(format, args...), redactSecrets(x.Body))
	}
	r, params, ok := d.match(escaped)
	if !ok {
		return d.checkCatalogueError(x, "TankerError", func(p string) error { return fail("unknown to the document", "%s", p) })
	}
	op := r.item.GetOperation(req.Method)
	if op == nil {
		schema := "TankerError"
		if r.item.Post != nil && slices.Contains(r.item.Post.Tags, "identity server") {
			schema = "SimpleError"
		}
		return d.checkCatalogueError(x, schema, func(p string) error { return fail(r.path+", no "+req.Method+" operation", "%s", p) })
	}
	route := &routers.Route{Spec: d.Doc, Server: d.Doc.Servers[0], Path: r.path, PathItem: r.item, Method: req.Method, Operation: op}
	opts := &openapi3filter.Options{IncludeResponseStatus: true, AuthenticationFunc: bearerPresent, ExcludeRequestBody: x.RequestBodyPartial}
	// A body of white space only counts as no body (the server accepted it as such).
	if len(bytes.TrimSpace(x.RequestBody)) == 0 {
		x.RequestBody = nil
	}
	in := &openapi3filter.RequestValidationInput{Request: cloneWithBody(req, x.RequestBody), PathParams: params, Route: route, Options: opts}
	if x.Status >= 200 && x.Status < 300 {
		// x-idvault-any-content-type: the route reads its body as its one media type (JSON,
		// or bytes for the exit server's decrypt) whatever the Content-Type.
		if any, _ := op.Extensions["x-idvault-any-content-type"].(bool); any && len(x.RequestBody) > 0 && op.RequestBody != nil && len(op.RequestBody.Value.Content) == 1 {
			for mediaType := range op.RequestBody.Value.Content {
				in.Request.Header.Set("Content-Type", mediaType)
			}
		}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			return fail(r.path, "the server accepted a request the document calls invalid: %v", err)
		}
		in.Request = cloneWithBody(req, x.RequestBody)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: x.Status, Header: x.Header, Options: opts}
	out.SetBodyBytes(x.Body)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return fail(r.path, "%v", err)
	}
	return nil
}

// bodyMatters reports whether checking an answer needs its body: false when the document gives
// its media type no schema (binary answers), or when the status or media type is not documented
// for the operation (the check fails whatever the body), so the check can run at the headers.
func (d *APIDoc) bodyMatters(req *http.Request, status int, header http.Header) bool {
	r, _, ok := d.match(req.URL.EscapedPath())
	if !ok {
		return true // a catalogue error body
	}
	op := r.item.GetOperation(req.Method)
	if op == nil {
		return true
	}
	resp := op.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return false
	}
	mt := resp.Value.Content.Get(header.Get("Content-Type"))
	return mt != nil && mt.Schema != nil
}

// checkCatalogueError checks an answer outside every operation: a JSON error body of the
// catalogue whose status matches the HTTP status.
func (d *APIDoc) checkCatalogueError(x Exchange, schema string, bad func(problem string) error) error {
	if !strings.HasPrefix(x.Header.Get("Content-Type"), "application/json") {
		return bad(fmt.Sprintf("want a JSON catalogue error, got Content-Type %q", x.Header.Get("Content-Type")))
	}
	var v any
	if err := json.Unmarshal(x.Body, &v); err != nil {
		return bad("body is not JSON")
	}
	if err := d.Doc.Components.Schemas[schema].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
		return bad("not a " + schema + ": " + err.Error())
	}
	if m, ok := v.(map[string]any); ok && schema == "TankerError" {
		if st, _ := m["error"].(map[string]any)["status"].(float64); int(st) != x.Status {
			return bad(fmt.Sprintf("error.status %v differs from the HTTP status", st))
		}
	}
	if x.Status < 400 {
		return bad("a route outside the document answered a success")
	}
	return nil
}

var secretField = regexp.MustCompile(`("(?:app_secret|auth_token|private_permanent_identity|private_provisional_identity|serviceIdentity|tankerIdentity|provisionalIdentity|verification_code)"\s*:\s*)"[^"]*"`)

// redactSecrets hides secret values of a body quoted in a failure message.
func redactSecrets(body []byte) []byte {
	return secretField.ReplaceAll(body, []byte(`$1"<redacted>"`))
}

// bearerPresent accepts a request that carries a bearer token (the server judged it valid,
// since the request succeeded).
func bearerPresent(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	scheme, token, ok := strings.Cut(in.RequestValidationInput.Request.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no bearer token")
	}
	return nil
}

func cloneWithBody(req *http.Request, body []byte) *http.Request {
	c := req.Clone(context.Background())
	c.Body = io.NopCloser(bytes.NewReader(body))
	c.ContentLength = int64(len(body))
	return c
}
