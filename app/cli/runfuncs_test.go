package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/idvault/idvault/app/apptest/funcsize"
)

// maxRunLines is the longest a run function of the CLI may be.
const maxRunLines = 60

// A newcomer reads a command's run function at once: no run function is over maxRunLines lines
// (a runFunc, or a function named run* or Run*), and no function of the exit commands' files
// either, but for a command's declaration and its setup, whose length is their help text and
// flag list (the flags' checks and the work go in the run function and what it calls).
func TestRunFunctionsAreShort(t *testing.T) {
	t.Parallel()
	run := func(f funcsize.Func) bool {
		name := f.Name[strings.LastIndex(f.Name, ".")+1:]
		if f.Literal {
			return f.Signature() == "func(context.Context, []string) int"
		}
		return (strings.HasPrefix(name, "run") || strings.HasPrefix(name, "Run")) && (len(name) == 3 || unicode.IsUpper(rune(name[3])))
	}
	exitCommand := func(f funcsize.Func) bool {
		if !strings.HasPrefix(filepath.Base(f.Pos.Filename), "exit_") {
			return false
		}
		sig := f.Signature()
		return sig != "func() *command" && sig != "func(*cmdline) runFunc"
	}
	fs := funcsize.Of(t, ".")
	if n := len(funcsize.Pick(fs, run)); n < 20 {
		t.Fatalf("found %d run functions: the runFunc signature in this test no longer matches command.go", n)
	}
	for _, f := range funcsize.Over(funcsize.Pick(fs, func(f funcsize.Func) bool { return run(f) || exitCommand(f) }), maxRunLines) {
		t.Errorf("%v (at most %d): cut it into named steps", f, maxRunLines)
	}
}
