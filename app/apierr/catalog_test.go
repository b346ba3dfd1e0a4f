package apierr

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite the error code table of app/openapi/API.md from the catalogue")

// apiPage is the HTTP API page, whose error code table is written from the catalogue.
var apiPage = filepath.Join("..", "openapi", "API.md")

// The table's marker lines: what lies between them is codeTable's, the rest of the page prose.
const (
	codesBegin = "<!-- error-codes: written by go test ./app/apierr -update -->"
	codesEnd   = "<!-- /error-codes -->"
)

// The exit catalogue's messages are the exit server's own: its OpenAPI document lists them as
// the default messages, so none may name a key of idvault serve's configuration (server.*).
func TestExitCatalogNamesExitKeys(t *testing.T) {
	t.Parallel()
	for _, c := range ExitCatalog {
		require.NotContains(t, c.Message, "server.", "exit catalogue code %s", c.Name)
	}
}

// Every code of the catalogues (idvault serve's and the exit server's) is an error status, has
// a message, is lower case, and has one status everywhere.
func TestCatalogIsComplete(t *testing.T) {
	t.Parallel()
	seen := map[string]int{}
	for _, c := range append(slices.Clone(Catalog), ExitCatalog...) {
		require.GreaterOrEqual(t, c.Status, 400, c.Name)
		require.Less(t, c.Status, 600, c.Name)
		require.NotEmpty(t, c.Message, c.Name)
		require.Equal(t, strings.ToLower(c.Name), c.Name)
		if prev, ok := seen[c.Name]; ok {
			require.Equal(t, prev, c.Status, "code %s has one status everywhere", c.Name)
		}
		seen[c.Name] = c.Status
	}
}

// codeTable is the HTTP API page's table of every code: one row per code and message, with the
// servers that answer it, in the catalogues' order.
func codeTable() string {
	type row struct {
		c           Code
		serve, exit bool
	}
	var rows []*row
	find := func(c Code) *row {
		for _, r := range rows {
			if r.c == c {
				return r
			}
		}
		r := &row{c: c}
		rows = append(rows, r)
		return r
	}
	for _, c := range Catalog {
		find(c).serve = true
	}
	for _, c := range ExitCatalog {
		find(c).exit = true
	}
	var sb strings.Builder
	sb.WriteString("| code | status | answered by | message |\n|---|---|---|---|\n")
	for _, r := range rows {
		by := "`idvault serve`"
		switch {
		case r.serve && r.exit:
			by = "both servers"
		case r.exit:
			by = "the exit server"
		}
		fmt.Fprintf(&sb, "| `%s` | %d | %s | %s |\n", r.c.Name, r.c.Status, by, strings.ReplaceAll(r.c.Message, "|", `\|`))
	}
	return sb.String()
}

// The HTTP API page lists every code of both catalogues with its status and message, as
// codeTable writes it (go test ./app/apierr -run TestAPIPageListsEveryCode -update rewrites
// the table and nothing else of the page).
func TestAPIPageListsEveryCode(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile(apiPage)
	require.NoError(t, err)
	begin, end := []byte(codesBegin+"\n"), []byte(codesEnd+"\n")
	i, j := bytes.Index(page, begin), bytes.Index(page, end)
	require.True(t, i >= 0 && j > i && bytes.Count(page, []byte(codesBegin)) == 1,
		"%s holds one pair of error-code markers", apiPage)
	want := codeTable()
	if *update {
		out := slices.Concat(page[:i+len(begin)], []byte(want), page[j:])
		require.NoError(t, os.WriteFile(apiPage, out, 0o644))
		return
	}
	require.Equal(t, want, string(page[i+len(begin):j]),
		"the error code table of %s differs from the catalogue: go test ./app/apierr -run TestAPIPageListsEveryCode -update", apiPage)
	for _, c := range append(slices.Clone(Catalog), ExitCatalog...) {
		require.Contains(t, string(page), fmt.Sprintf("| `%s` | %d |", c.Name, c.Status), "code %s listed", c.Name)
	}
}
