package cli

import (
	"context"
	"fmt"
	"strings"
)

// Shell completion. The scripts are thin: the shell passes the words typed so far to the
// hidden command "idvault __complete", which answers from the same command table that help
// is generated from, so completion knows every command and flag, including new ones.

func completionCommand() *command {
	return &command{
		name:    "completion",
		args:    "bash|zsh|fish",
		summary: "print a shell completion script for bash, zsh or fish",
		help: `bash: source <(idvault completion bash), or save it as
      /etc/bash_completion.d/idvault (or ~/.local/share/bash-completion/completions/idvault).
zsh:  source <(idvault completion zsh) after compinit, or save it as _idvault in a folder
      of your $fpath.
fish: idvault completion fish | source, or save it as ~/.config/fish/completions/idvault.fish.`,
		setup: func(c *cmdline) runFunc {
			return func(_ context.Context, args []string) int {
				if len(args) != 1 {
					return c.usageError("want one shell: bash, zsh or fish")
				}
				switch args[0] {
				case "bash":
					fmt.Fprint(c.p.stdout, bashCompletion)
				case "zsh":
					fmt.Fprint(c.p.stdout, zshCompletion)
				case "fish":
					fmt.Fprint(c.p.stdout, fishCompletion)
				default:
					return c.usageError("unsupported shell %q: want bash, zsh or fish%s", args[0], didYouMean(args[0], []string{"bash", "zsh", "fish"}, quoted))
				}
				return exitOK
			}
		},
	}
}

func completeCommand() *command {
	return &command{
		name:    "__complete",
		hidden:  true,
		raw:     true,
		summary: "print completions for the words typed so far, the last one being completed",
		setup: func(c *cmdline) runFunc {
			return func(_ context.Context, words []string) int {
				for _, s := range completions(c.p, words) {
					fmt.Fprintln(c.p.stdout, s)
				}
				return exitOK
			}
		},
	}
}

// completions are the candidates for the last of words (typed after "idvault"): subcommand
// names, or flags when it starts with "-"; nothing after a flag that takes a value, so the
// shell completes a file name.
func completions(p *prog, words []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	cur, done := words[len(words)-1], words[:len(words)-1]
	cmd, path := root(), ""
	var flags []flagInfo
	needsValue := false
	for _, w := range done {
		if needsValue {
			needsValue = false
			continue
		}
		if strings.HasPrefix(w, "-") {
			name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			for _, f := range flags {
				if f.name == name && f.value != "" && !hasValue {
					needsValue = true
				}
			}
			continue
		}
		if sub := cmd.subcommand(w); sub != nil && !sub.hidden {
			cmd, path = sub, joinPath(path, w)
			flags = completionFlags(p, cmd, path)
		}
	}
	if needsValue {
		return nil
	}
	var out []string
	if strings.HasPrefix(cur, "-") {
		for _, f := range flags {
			out = append(out, "--"+f.name)
		}
		out = append(out, "--help")
	} else {
		for _, s := range cmd.subs {
			if !s.hidden {
				out = append(out, s.name)
			}
		}
		if cmd.name == "completion" {
			out = append(out, "bash", "zsh", "fish")
		}
	}
	var match []string
	for _, s := range out {
		if strings.HasPrefix(s, cur) {
			match = append(match, s)
		}
	}
	return match
}

// completionFlags are the flags of cmd, from its declaration (setup).
func completionFlags(p *prog, cmd *command, path string) []flagInfo {
	return flagsOf(p, cmd, path)
}

const bashCompletion = `# bash completion for idvault.
# Use: source <(idvault completion bash), or save as ~/.local/share/bash-completion/completions/idvault
_idvault() {
    local IFS=$'\n' out
    out=$("${COMP_WORDS[0]}" __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null) || return 0
    COMPREPLY=($(compgen -W "$out" -- "${COMP_WORDS[COMP_CWORD]}"))
}
complete -o default -F _idvault idvault ./idvault
`

const zshCompletion = `#compdef idvault
# zsh completion for idvault.
# Use: source <(idvault completion zsh) after compinit, or save as _idvault in a folder of $fpath.
_idvault() {
    local -a candidates
    candidates=("${(@f)$("${words[1]}" __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
    candidates=(${candidates:#})
    if (( ${#candidates} )); then
        compadd -- "${candidates[@]}"
    else
        _files
    fi
}
if [[ "${zsh_eval_context[-1]}" == loadautofunc ]]; then
    _idvault "$@"
else
    compdef _idvault idvault ./idvault
fi
`

// fishCompletion offers idvault's candidates, and file names where it has none (after a flag
// that takes a value).
const fishCompletion = `# fish completion for idvault.
# Use: idvault completion fish | source, or save as ~/.config/fish/completions/idvault.fish
function __idvault_candidates
    set -l words (commandline -opc) (commandline -ct)
    $words[1] __complete $words[2..-1] 2>/dev/null
end
complete -c idvault -f -n 'test -n "$(__idvault_candidates)"' -a '(__idvault_candidates)'
complete -c idvault -F -n 'test -z "$(__idvault_candidates)"'
`
