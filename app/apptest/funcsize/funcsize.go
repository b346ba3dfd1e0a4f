// Package funcsize measures the functions of a package's source, for the tests that keep some
// of them short (the CLI's run functions, the stages of a pipeline): a long function there is
// one a newcomer cannot read at once, and such a test names it rather than let it grow.
//
// It imports only the standard library, so that tests of any package may use it.
package funcsize

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Func is a function of a package's source: a declared function or method, or a function
// literal.
type Func struct {
	// Name is the declared name ("Run", "(*pipeline).write"), or for a literal the name of the
	// function declaring it followed by ".func" ("exitAuditCommand.func").
	Name string
	// Pos is where it starts.
	Pos token.Position
	// Lines counts its lines, from the func keyword to the closing brace.
	Lines int
	// Type is its signature.
	Type *ast.FuncType
	// Literal is true for a function literal.
	Literal bool
}

func (f Func) String() string {
	return fmt.Sprintf("%s:%d: %s is %d lines", filepath.Base(f.Pos.Filename), f.Pos.Line, f.Name, f.Lines)
}

// Of returns every function of the Go files of dir that are not tests, in file and line order.
// A file that does not parse fails tb.
func Of(tb testing.TB, dir string) []Func {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(paths)
	var out []Func
	fset := token.NewFileSet()
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			tb.Fatalf("funcsize: %v", err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			name := declName(fd)
			out = append(out, measure(fset, name, fd, fd.Type, false))
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if lit, ok := n.(*ast.FuncLit); ok {
					out = append(out, measure(fset, name+".func", lit, lit.Type, true))
				}
				return true
			})
		}
	}
	return out
}

// Pick returns the functions of fs that pick chooses.
func Pick(fs []Func, pick func(Func) bool) []Func {
	var out []Func
	for _, f := range fs {
		if pick(f) {
			out = append(out, f)
		}
	}
	return out
}

// Over returns the functions of fs longer than max lines.
func Over(fs []Func, max int) []Func {
	return Pick(fs, func(f Func) bool { return f.Lines > max })
}

// Signature is f's signature without the names of its parameters and results (a function type
// among them keeps its own): "func(context.Context, []string) int".
func (f Func) Signature() string {
	t := *f.Type
	t.Params, t.Results = unnamed(t.Params), unnamed(t.Results)
	return types.ExprString(&t)
}

func unnamed(fl *ast.FieldList) *ast.FieldList {
	if fl == nil {
		return nil
	}
	out := &ast.FieldList{}
	for _, f := range fl.List {
		for range max(1, len(f.Names)) {
			out.List = append(out.List, &ast.Field{Type: f.Type})
		}
	}
	return out
}

func measure(fset *token.FileSet, name string, n ast.Node, typ *ast.FuncType, literal bool) Func {
	start := fset.Position(n.Pos())
	return Func{Name: name, Pos: start, Lines: fset.Position(n.End()).Line - start.Line + 1, Type: typ, Literal: literal}
}

func declName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	return "(" + types.ExprString(fd.Recv.List[0].Type) + ")." + fd.Name.Name
}
