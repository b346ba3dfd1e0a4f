package cli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A mistyped command, subcommand or flag is a usage error that names what was probably meant;
// a word close to nothing gets no guess.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serv"}, `idvault: unknown command "serv". Did you mean "serve"?`},
		{[]string{"verison"}, `idvault: unknown command "verison". Did you mean "version"?`},
		{[]string{"app", "creat"}, `idvault app: unknown subcommand "creat". Did you mean "create"?`},
		{[]string{"app", "rotate"}, `idvault app: unknown subcommand "rotate". Did you mean "rotate-token"?`},
		{[]string{"exit", "gen-dum"}, `idvault exit: unknown subcommand "gen-dum". Did you mean "gen-dump"?`},
		{[]string{"help", "bakup"}, `idvault: unknown command "bakup". Did you mean "backup"?`},
		{[]string{"app", "create", "--nme", "x"}, `idvault app create: flag provided but not defined: --nme. Did you mean --name?`},
		{[]string{"serve", "--lisen", "x"}, `idvault serve: flag provided but not defined: --lisen. Did you mean --listen?`},
		{[]string{"exit", "gen-dump", "--user", "3"}, `flag provided but not defined: --user. Did you mean --users?`},
		{[]string{"completion", "fsh"}, `unsupported shell "fsh": want bash, zsh or fish. Did you mean "fish"?`},
	} {
		out, errOut, code := runHere(t, tc.args...)
		require.Equal(t, exitUsage, code, "%v", tc.args)
		require.Empty(t, out)
		require.Contains(t, errOut, tc.want+"\n", "%v", tc.args)
	}
	_, errOut, _ := runHere(t, "frobnicate")
	require.Contains(t, errOut, "idvault: unknown command \"frobnicate\"\n")
	require.NotContains(t, errOut, "Did you mean")
}

// A mistyped command prints the suggestion and one line pointing at --help, not the whole list
// of commands, which would push the error off the screen.
func TestMistypedCommandIsTwoLines(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"srve"}, "idvault: unknown command \"srve\". Did you mean \"serve\"?\nRun 'idvault --help' for the list of commands.\n"},
		{[]string{"frobnicate", "--data", "x"}, "idvault: unknown command \"frobnicate\"\nRun 'idvault --help' for the list of commands.\n"},
		{[]string{"help", "bakup"}, "idvault: unknown command \"bakup\". Did you mean \"backup\"?\nRun 'idvault --help' for the list of commands.\n"},
		{[]string{"app", "creat"}, "idvault app: unknown subcommand \"creat\". Did you mean \"create\"?\nRun 'idvault app --help' for the list of subcommands.\n"},
		{[]string{"config", "chek"}, "idvault config: unknown subcommand \"chek\". Did you mean \"check\"?\nRun 'idvault config --help' for the list of subcommands.\n"},
		{[]string{"exit", "frobnicate"}, "idvault exit: unknown subcommand \"frobnicate\"\nRun 'idvault exit --help' for the list of subcommands.\n"},
		{[]string{"exit", "--listen", "127.0.0.1:0", "decrypt-record"}, "idvault exit: unknown subcommand \"decrypt-record\". Did you mean \"decrypt-records\"?\nRun 'idvault exit --help' for the list of subcommands.\n"},
	} {
		out, errOut, code := runHere(t, tc.args...)
		require.Equal(t, exitUsage, code, "%v", tc.args)
		require.Empty(t, out)
		require.Equal(t, tc.want, errOut, "%v", tc.args)
	}
}

func TestSuggest(t *testing.T) {
	t.Parallel()
	cands := []string{"serve", "app", "config", "backup", "exit", "version", "completion", "init"}
	for word, want := range map[string]string{
		"serv": "serve", "sevre": "serve", "ap": "app", "confg": "config", "comp": "completion",
		"x": "", "zzzzzz": "", "": "", "serve": "",
	} {
		require.Equal(t, want, suggest(word, cands), word)
	}
}
