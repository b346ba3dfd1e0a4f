package cli

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// everyCommand walks the command table: every command a user can reach, with its path.
func everyCommand(cmd *command, path string, visit func(cmd *command, path string)) {
	if path != "" || cmd.setup != nil {
		visit(cmd, path)
	}
	for _, s := range cmd.subs {
		if !s.hidden {
			everyCommand(s, joinPath(path, s.name), visit)
		}
	}
}

func runHere(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), args, &out, &errb, Env{Environ: []string{"IDVAULT_STORE__PATH=" + t.TempDir() + "/none.db"}})
	return out.String(), errb.String(), code
}

var singleDash = regexp.MustCompile(`(^|[\s\[(,])-[a-zA-Z]`)

// Every command, including ones added later: --help prints one help, on stdout only, exit 0;
// its usage line lists every flag the command declares, spelled --flag; no single-dash flag
// anywhere in the help.
func TestHelpRulesForEveryCommand(t *testing.T) {
	t.Parallel()
	n := 0
	everyCommand(root(), "", func(cmd *command, path string) {
		n++
		for _, helpArg := range []string{"--help", "-h"} {
			args := append(strings.Fields(path), helpArg)
			out, errOut, code := runHere(t, args...)
			require.Equal(t, exitOK, code, "%v", args)
			require.Empty(t, errOut, "%v: help goes to stdout only", args)
			require.True(t, strings.HasPrefix(out, "Usage: idvault "+path), "%v: %q", args, out)
			require.LessOrEqual(t, strings.Count(out, "\nFlags:"), 1, "%v", args)
			require.NotContains(t, out, "Flags:\n\n", "%v: empty Flags section", args)
			if !strings.Contains(out, "Flags:") {
				require.Empty(t, flagsOf(&prog{}, cmd, path), "%v declares flags but shows none", args)
			}
			for _, name := range regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`).FindAllStringSubmatch(out, -1) {
				require.NotRegexp(t, `(^|[\s\[(,'])-`+regexp.QuoteMeta(name[1])+`\b`, out, "%v: --%s spelled with one dash", args, name[1])
			}
			first := strings.SplitN(out, "\n\n", 2)[0]
			require.Equal(t, 1, strings.Count(out, first), "%v: usage printed more than once", args)
			usage := strings.Join(strings.Fields(first), " ")
			// Whatever way the command is written, its usage line lists the flags its help lists.
			_, flagList, _ := strings.Cut(out, "\nFlags:\n")
			for _, m := range regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`).FindAllStringSubmatch(flagList, -1) {
				require.Regexp(t, `\[?--`+regexp.QuoteMeta(m[1])+`[ \]]`, usage+" ", "%v: usage line lacks --%s", args, m[1])
			}
			if cmd.setup == nil {
				continue
			}
			c := (&prog{}).cmdlineFor(cmd, path)
			cmd.setup(c)
			c.VisitAll(func(f *flag.Flag) {
				require.Regexp(t, `\[?--`+regexp.QuoteMeta(f.Name)+`[ \]]`, usage+" ", "%v: usage line lacks --%s", args, f.Name)
				require.Contains(t, out, "\n  --"+f.Name, "%v: flag list lacks --%s", args, f.Name)
			})
		}
		// The group's help shows this command's usage line exactly as its own help does.
		if parent := strings.Fields(path); len(parent) > 1 && len(cmd.subs) == 0 {
			own, _, _ := runHere(t, append(strings.Fields(path), "--help")...)
			group, _, _ := runHere(t, append(parent[:len(parent)-1], "--help")...)
			line := strings.Join(strings.Fields(strings.TrimPrefix(strings.SplitN(own, "\n\n", 2)[0], "Usage: ")), " ")
			require.Contains(t, strings.Join(strings.Fields(group), " "), line, "%s: group help and own help disagree", path)
		}
	})
	require.GreaterOrEqual(t, n, 10)
}

func TestUsageErrorsGoToStderrWithExit2(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{}, {"app"}, {"app", "create"}, {"app", "create", "--nme", "x"},
		{"app", "show"}, {"config"}, {"backup"}, {"version", "extra"}, {"completion", "tcsh"},
		{"exit"},
	} {
		out, errOut, code := runHere(t, args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.Empty(t, out, "%v: a usage error prints nothing on stdout", args)
		require.Contains(t, errOut, "Usage: idvault", "%v", args)
		require.False(t, singleDash.MatchString(errOut), "%v: single-dash flag:\n%s", args, errOut)
	}
	// A mistyped command is two lines and no usage (TestMistypedCommandIsTwoLines).
	_, errOut, _ := runHere(t, "app", "create")
	require.Contains(t, errOut, "--name is required")
	_, errOut, _ = runHere(t, "app", "create", "--nme", "x")
	require.Contains(t, errOut, "flag provided but not defined: --nme")
}

func TestHelpCommand(t *testing.T) {
	t.Parallel()
	out, _, code := runHere(t, "help", "app", "delete")
	require.Equal(t, exitOK, code)
	require.True(t, strings.HasPrefix(out, "Usage: idvault app delete"), out)
	own, _, _ := runHere(t, "app", "delete", "--help")
	require.Equal(t, own, out)
}

// The README's Commands section names every command, and every flag of each appears in its
// documentation: the README, or for the exit tool's commands its guide (exit/README.md), which
// the README links. A command or flag added without documentation fails here.
func TestReadmeDocumentsEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	read := func(rel string) string {
		raw, err := os.ReadFile(filepath.Join("..", "..", rel))
		require.NoError(t, err)
		return string(raw)
	}
	readme, exitGuide := read("README.md"), read(filepath.Join("exit", "README.md"))
	everyCommand(root(), "", func(cmd *command, path string) {
		if cmd.setup == nil && len(cmd.subs) > 0 {
			return // a group: its commands are checked
		}
		require.Contains(t, readme, "idvault "+path, "the README does not name `idvault %s`", path)
		doc, name := readme, "the README"
		if path == "exit" || strings.HasPrefix(path, "exit ") {
			doc, name = exitGuide, "exit/README.md"
			require.Contains(t, doc, "idvault "+path, "%s does not name `idvault %s`", name, path)
		}
		help, _, _ := runHere(t, append(strings.Fields(path), "--help")...)
		for _, m := range regexp.MustCompile(`(?m)^  --([a-z0-9-]+)`).FindAllStringSubmatch(help, -1) {
			require.Regexp(t, `--`+regexp.QuoteMeta(m[1])+`\b`, doc, "%s does not document --%s of idvault %s", name, m[1], path)
		}
	})
}
