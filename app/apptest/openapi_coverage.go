package apptest

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
)

var fiberParam = regexp.MustCompile(`:([a-z_]+)`)

// RequireSameOperations fails tb unless app serves exactly the operations the document
// describes, HEAD included (middleware and the HTML pages outside the document aside): a route added
// without its description, or a description of a route that is gone, fails.
func (d *APIDoc) RequireSameOperations(tb testing.TB, app *fiber.App) {
	tb.Helper()
	var served []string
	for _, r := range app.GetRoutes(true) {
		if r.Method == "USE" ||
			(d.ui != "" && (r.Path == d.ui || strings.HasPrefix(r.Path, d.ui+"/"))) {
			continue
		}
		served = append(served, r.Method+" "+fiberParam.ReplaceAllString(r.Path, "{$1}"))
	}
	d.RequireSameRoutes(tb, served)
}

// RequireSameRoutes is RequireSameOperations for a server that lists its operations itself,
// as "METHOD /path/{param}".
func (d *APIDoc) RequireSameRoutes(tb testing.TB, routes []string) {
	tb.Helper()
	served := map[string]bool{}
	for _, r := range routes {
		served[r] = true
	}
	documented := map[string]bool{}
	for path, item := range d.Doc.Paths.Map() {
		for method := range item.Operations() {
			documented[method+" "+path] = true
		}
	}
	require.NotEmpty(tb, served)
	for k := range served {
		require.True(tb, documented[k], "route %s is served but not in app/openapi/%s", k, d.name)
	}
	for k := range documented {
		require.True(tb, served[k], "%s describes %s, which is not served", d.name, k)
	}
}

// RequireEveryCode fails tb unless every code of catalog is in the document's ErrorCode list
// and, but for not_found and method_not_allowed (the answers of any path), answered by an
// operation with its example.
func (d *APIDoc) RequireEveryCode(tb testing.TB, catalog []apierr.Code) {
	tb.Helper()
	enum := d.Doc.Components.Schemas["ErrorCode"].Value.Enum
	for _, c := range catalog {
		require.Contains(tb, enum, any(c.Name), "%s: ErrorCode lists %s", d.name, c.Name)
		if slices.Contains([]string{"not_found", "method_not_allowed"}, c.Name) {
			continue
		}
		// An example is named for its code, or for its code and a body style (name_simple).
		ref := `"#/components/examples/` + c.Name
		require.True(tb, bytes.Contains(d.raw, []byte(ref+`"`)) || bytes.Contains(d.raw, []byte(ref+`_`)),
			"%s: an operation answers %s, with an example", d.name, c.Name)
	}
}
