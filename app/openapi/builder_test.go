package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/idvault/idvault/app/apierr"
)

// The builder both documents are written with (openapi.json from document_test.go, exit.json
// from exit_document_test.go): operations, error answers taken from the catalogue with an
// example per code, and the encoding of the committed files.

type m = map[string]any
type list = []any

// errStyle is the shape of an operation's error bodies (apierr.Style).
type errStyle int

const (
	tanker errStyle = iota // {"error": {status, code, message, trace_id}}
	simple                 // {"error": message, "code": code} (identity server)
	send                   // tanker, or flat {status, code, message} for apps with legacy_errors
)

type builder struct {
	examples m
	paths    m
	// anyRoute are the codes any operation may answer; withBody, those any operation that
	// takes a body may answer besides.
	anyRoute, withBody []apierr.Code
	// headers are the response headers of every error answer of a status (Retry-After of a 503).
	headers map[int]m
	// fields are the members a code adds to its error object, as its example shows them
	// (invalid_identity's entries).
	fields map[string]m
	// schemas are the named error schemas of the operations (add names them
	// <OperationId>Error<status>), for components.schemas.
	schemas m
}

func newBuilder(anyRoute, withBody []apierr.Code) *builder {
	return &builder{examples: m{}, paths: m{}, anyRoute: anyRoute, withBody: withBody, headers: map[int]m{}, fields: map[string]m{}, schemas: m{}}
}

// license is both documents' license: the project's (LICENSE at the repository's top level).
var license = m{"name": "Apache License 2.0", "identifier": "Apache-2.0"}

func ref(name string) m { return m{"$ref": "#/components/schemas/" + name} }

func (b *builder) example(key, summary string, value any) m {
	b.examples[key] = m{"summary": summary, "value": value}
	return m{"$ref": "#/components/examples/" + key}
}

// errorResponse is the answer of one status: the codes listed, each with an example.
func (b *builder) errorResponse(status int, codes []apierr.Code, style errStyle) m {
	sort.Slice(codes, func(i, j int) bool { return codes[i].Name < codes[j].Name })
	var names, quoted []string
	examples := m{}
	for _, c := range codes {
		if c.Status != status {
			panic(fmt.Sprintf("%s is %d, not %d", c.Name, c.Status, status))
		}
		names = append(names, c.Name)
		quoted = append(quoted, "`"+c.Name+"`")
		switch style {
		case simple:
			examples[c.Name] = b.example(c.Name+"_simple", c.Name, m{"error": c.Message, "code": c.Name})
		default:
			examples[c.Name] = b.example(c.Name, c.Name, m{"error": merge(m{"status": status, "code": c.Name, "message": c.Message, "trace_id": traceID}, b.fields[c.Name])})
			if style == send {
				examples[c.Name+"_legacy"] = b.example(c.Name+"_legacy", c.Name+" (app with legacy_errors)", m{"status": status, "code": c.Name, "message": c.Message})
			}
		}
	}
	desc := strings.Join(quoted, ", ")
	var schema m
	// The narrowing repeats the types of message and trace_id, so that a generator merging the
	// allOf (oapi-codegen) or intersecting it (openapi-typescript) types them as strings.
	typed := func() m {
		return m{"status": m{"type": "integer", "const": status}, "code": m{"type": "string", "enum": names},
			"message": m{"type": "string"}}
	}
	inner := typed()
	inner["trace_id"] = m{"type": "string"}
	narrowed := m{"allOf": list{ref("TankerError"), m{"type": "object", "required": list{"error"}, "properties": m{"error": m{"type": "object",
		"required": list{"status", "code", "message", "trace_id"}, "properties": inner}}}}}
	switch style {
	case simple:
		schema = m{"allOf": list{ref("SimpleError"), m{"type": "object", "required": list{"error", "code"}, "properties": m{
			"error": m{"type": "string"}, "code": m{"type": "string", "enum": names}}}}}
		desc = `{"error": message, "code": code}; catalogue codes ` + desc
	case send:
		schema = m{"oneOf": list{narrowed, m{"allOf": list{ref("FlatError"), m{"type": "object", "required": list{"status", "code", "message"}, "properties": typed()}}}}}
	default:
		schema = narrowed
	}
	r := m{"description": desc, "content": m{"application/json": m{"schema": schema, "examples": examples}}}
	if status == 429 {
		r["headers"] = m{"Retry-After": m{"description": "seconds to wait", "required": true, "schema": m{"type": "integer", "minimum": 1}}}
	}
	if status == 401 && style == simple {
		r["headers"] = m{"WWW-Authenticate": m{"description": "Bearer realm; with error=\"invalid_token\" for a refused ID token", "schema": m{"type": "string"}}}
	}
	if status == 503 && style == simple {
		r["headers"] = m{"Retry-After": m{"description": "seconds to wait (identity_provider_unavailable: until the provider is asked again)", "schema": m{"type": "integer", "minimum": 1}}}
	}
	if h := b.headers[status]; h != nil {
		hs, _ := r["headers"].(m)
		r["headers"] = merge(hs, h)
	}
	return r
}

// errors are the error answers of an operation: its codes, plus those of any route
// (b.anyRoute), plus b.withBody when it takes a body.
func (b *builder) errors(style errStyle, withBody bool, codes ...apierr.Code) m {
	codes = append(slices.Clone(codes), b.anyRoute...)
	if withBody {
		codes = append(codes, b.withBody...)
	}
	by := map[int][]apierr.Code{}
	for _, c := range codes {
		by[c.Status] = append(by[c.Status], c)
	}
	out := m{}
	for status, cs := range by {
		out[fmt.Sprint(status)] = b.errorResponse(status, cs, style)
	}
	return out
}

func ok(status, desc string, schema any, example any, ctype string) m {
	c := m{"schema": schema}
	if example != nil {
		c["example"] = example
	}
	return m{status: m{"description": desc, "content": m{ctype: c}}}
}

func jsonOK(desc string, schema, example any) m {
	return ok("200", desc, schema, example, "application/json")
}

func merge(parts ...m) m {
	out := m{}
	for _, p := range parts {
		for k, v := range p {
			out[k] = v
		}
	}
	return out
}

func jsonBody(schema, example any, required bool, desc string) m {
	b := m{"required": required, "content": m{"application/json": m{"schema": schema, "example": example}}}
	if desc != "" {
		b["description"] = desc
	}
	return b
}

type operation struct {
	id, tag, summary, desc string
	responses              m
	params                 list
	body                   m
	security               list
}

// add describes an operation. Its JSON error answers get named schemas (<OperationId>Error<status>
// in components.schemas), so that generated clients have a type per error answer; a GET also
// gets its HEAD (the servers answer HEAD on every GET route: the same status and headers,
// no body).
func (b *builder) add(path, method string, o operation) {
	for status, r := range o.responses {
		c, _ := r.(m)["content"].(m)
		js, _ := c["application/json"].(m)
		if schema, _ := js["schema"].(m); status >= "400" && schema != nil && schema["$ref"] == nil {
			name := strings.ToUpper(o.id[:1]) + o.id[1:] + "Error" + status
			b.schemas[name] = schema
			js["schema"] = ref(name)
		}
	}
	if method == "get" {
		head := o
		head.id += "Head"
		head.summary += " (headers only)"
		head.desc = "The answer of GET " + path + " without its body."
		head.responses = m{}
		for status, r := range o.responses {
			hr := m{"description": r.(m)["description"]}
			if h, ok := r.(m)["headers"]; ok {
				hr["headers"] = h
			}
			head.responses[status] = hr
		}
		head.body = nil
		b.add(path, "head", head)
	}
	op := m{"operationId": o.id, "tags": list{o.tag}, "summary": o.summary, "description": o.desc, "responses": o.responses, "security": o.security}
	if o.security == nil {
		op["security"] = list{}
	}
	if len(o.params) > 0 {
		op["parameters"] = o.params
	}
	if o.body != nil {
		op["requestBody"] = o.body
		op["x-idvault-any-content-type"] = true
	}
	item, _ := b.paths[path].(m)
	if item == nil {
		item = m{}
		b.paths[path] = item
	}
	item[method] = op
}

func obj(required []string, props m) m {
	o := m{"type": "object", "additionalProperties": false, "properties": props}
	if len(required) > 0 {
		o["required"] = required
	}
	return o
}

// render encodes a document as its committed file holds it: indented, keys sorted, no HTML
// escaping.
func render(doc m) []byte {
	typeEnums(doc)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// typeEnums gives every enum and const without a type the type of its values (validators and
// generators want "type" beside "enum").
func typeEnums(v any) {
	switch v := v.(type) {
	case m:
		for _, x := range v {
			typeEnums(x)
		}
		if _, typed := v["type"]; typed || v["$ref"] != nil {
			return
		}
		values, _ := v["enum"].(list)
		if strs, ok := v["enum"].([]string); ok && len(strs) > 0 {
			values = list{strs[0]}
		}
		if c, ok := v["const"]; ok {
			values = list{c}
		}
		if len(values) == 0 {
			return
		}
		var types []string
		for _, x := range values {
			t := "string"
			switch x.(type) {
			case nil:
				t = "null"
			case bool:
				t = "boolean"
			case int:
				t = "integer"
			case float64:
				t = "number"
			}
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
		if len(types) == 1 {
			v["type"] = types[0]
		} else {
			v["type"] = types
		}
	case list:
		for _, x := range v {
			typeEnums(x)
		}
	}
}

// withSchemas adds the operations' named error schemas to the components.
func withSchemas(components, schemas m) m {
	all := components["schemas"].(m)
	for k, v := range schemas {
		if _, taken := all[k]; taken {
			panic("schema name taken: " + k)
		}
		all[k] = v
	}
	return components
}

// codeNames is the sorted names of a catalogue's codes, each once.
func codeNames(cat []apierr.Code) []string {
	var names []string
	for _, c := range cat {
		if !slices.Contains(names, c.Name) {
			names = append(names, c.Name)
		}
	}
	sort.Strings(names)
	return names
}

// catalogueTable is a catalogue as a Markdown table sorted by code: its status and default
// message (of the code's first entry, where a code has several).
func catalogueTable(cat []apierr.Code) string {
	rows := []string{"| code | status | default message |", "|---|---|---|"}
	for _, n := range codeNames(cat) {
		i := slices.IndexFunc(cat, func(c apierr.Code) bool { return c.Name == n })
		rows = append(rows, fmt.Sprintf("| `%s` | %d | %s |", n, cat[i].Status, cat[i].Message))
	}
	return strings.Join(rows, "\n")
}
