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
			require.False(t, singleDash.MatchString(out), "%v: single-dash flag in help:\n%s", args, out)
			first := strings.SplitN(out, "\n\n", 2)[0]
			require.Equal(t, 1, strings.Count(out, first), "%v: usage printed more than once", args)
			if cmd.setup == nil {
				continue
			}
			usage := strings.Join(strings.Fields(first), " ")
			c := (&prog{}).cmdlineFor(cmd, path)
			cmd.setup(c)
			c.VisitAll(func(f *flag.Flag) {
				require.Regexp(t, `\[?--`+regexp.QuoteMeta(f.Name)+`[ \]]`, usage+" ", "%v: usage line lacks --%s", args, f.Name)
				require.Contains(t, out, "\n  --"+f.Name, "%v: flag list lacks --%s", args, f.Name)
			})
		}
		// The group's help shows this command's usage line exactly as its own help does.
		if parent := strings.Fields(path); len(parent) > 1 && cmd.setup != nil {
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
		{}, {"frobnicate"}, {"app"}, {"app", "frobnicate"}, {"app", "create"}, {"app", "create", "--nme", "x"},
		{"app", "show"}, {"config"}, {"backup"}, {"version", "extra"}, {"completion", "fish"},
	} {
		out, errOut, code := runHere(t, args...)
		require.Equal(t, exitUsage, code, "%v", args)
		require.Empty(t, out, "%v: a usage error prints nothing on stdout", args)
		require.Contains(t, errOut, "Usage: idvault", "%v", args)
		require.False(t, singleDash.MatchString(errOut), "%v: single-dash flag:\n%s", args, errOut)
	}
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

// The README's Commands section names every command, and every flag of each appears in the
// README: a command or flag added without documentation fails here.
func TestReadmeDocumentsEveryCommandAndFlag(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	readme := string(raw)
	everyCommand(root(), "", func(cmd *command, path string) {
		if cmd.setup == nil {
			return
		}
		require.Contains(t, readme, "idvault "+path, "the README does not name `idvault %s`", path)
		for _, f := range flagsOf(&prog{}, cmd, path) {
			require.Regexp(t, `--`+regexp.QuoteMeta(f.name)+`\b`, readme, "the README does not document --%s of idvault %s", f.name, path)
		}
	})
}
