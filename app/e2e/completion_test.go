package e2e_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// completionCases: words typed after "idvault" (the last one being completed) and the
// candidates the shell must offer.
var completionCases = []struct {
	words []string
	want  []string
}{
	{[]string{""}, nil}, // every command: checked against the command table below
	{[]string{"app", "r"}, []string{"rotate-token"}},
	{[]string{"app", "create", "--le"}, []string{"--legacy-errors"}},
	{[]string{"serve", "--data", "x.db", "--li"}, []string{"--listen"}},
	{[]string{"config", ""}, []string{"check"}},
	{[]string{"completion", ""}, []string{"bash", "zsh", "fish"}},
	{[]string{"exit", "gen-dump", "--us"}, []string{"--users"}},
	{[]string{"exit", "load-dump", "--db", ""}, []string{}},
	{[]string{"backup", "--out", ""}, []string{}}, // a file name: the shell's own completion
}

// The bash script, sourced into a real bash, offers the commands and flags of the table.
func TestBashCompletion(t *testing.T) {
	t.Parallel()
	script := `source <(idvault completion bash)
COMP_WORDS=(idvault "$@"); COMP_CWORD=$#
_idvault
printf '%s\n' "${COMPREPLY[@]}"`
	requireCompletions(t, []string{"bash", "-c", script, "bash"}, nil)
}

// The zsh script, sourced into a real zsh with compadd and _files stubbed to print what they
// would offer.
func TestZshCompletion(t *testing.T) {
	t.Parallel()
	zsh := apptest.Command(t, "zsh", "zsh")
	script := `compdef() { :; }
compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }
_files() { print -- FILES; }
source <(idvault completion zsh)
words=(idvault "$@"); CURRENT=$(( $# + 1 ))
_idvault`
	requireCompletions(t, []string{zsh, "-f", "-c", script, "zsh"}, []string{"FILES"})
}

// The fish script, sourced into a real fish, asked with `complete --do-complete` what it
// offers (fish's own file names, when idvault offers nothing, are those of an empty directory).
func TestFishCompletion(t *testing.T) {
	t.Parallel()
	fish := apptest.Command(t, "fish", "fish")
	empty := t.TempDir()
	script := `idvault completion fish | source
cd ` + empty + `
complete --do-complete "idvault $argv" | string replace -r '\t.*' ''
true`
	requireCompletions(t, []string{fish, "--no-config", "-c", script}, nil)
}

// requireCompletions runs shell (a command line that takes the typed words as its arguments,
// with the real binary first in PATH) for every case of completionCases and checks what it
// offers; none is what the shell prints when idvault offers nothing (the shell's own file
// completion).
func requireCompletions(t *testing.T, shell, none []string) {
	t.Helper()
	bin := apptest.Binary(t)
	for _, c := range completionCases {
		cmd := exec.Command(shell[0], append(shell[1:], c.words...)...)
		cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(bin)+":"+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		got := strings.Fields(string(out))
		switch {
		case c.want == nil:
			require.ElementsMatch(t, topLevel(t, bin), got)
		case len(c.want) == 0 && none == nil:
			require.Empty(t, got, "%v", c.words)
		case len(c.want) == 0:
			require.Equal(t, none, got, "%v", c.words)
		default:
			require.ElementsMatch(t, c.want, got, "%v", c.words)
		}
	}
}

// topLevel lists the commands `idvault --help` shows.
func topLevel(t *testing.T, bin string) []string {
	out, err := exec.Command(bin, "--help").Output()
	require.NoError(t, err)
	_, list, ok := strings.Cut(string(out), "\nCommands:\n")
	require.True(t, ok)
	var names []string
	for _, line := range strings.Split(list, "\n") {
		if strings.HasPrefix(line, "  ") {
			names = append(names, strings.Fields(line)[0])
		}
	}
	require.Contains(t, names, "completion")
	require.NotContains(t, names, "__complete")
	return names
}
