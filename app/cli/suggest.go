package cli

import (
	"flag"
	"strings"
)

// suggest is the candidate a mistyped word most likely meant: the closest by edit distance, at
// most 2 edits away (a third of the word for short ones), or the only candidate the word is a
// prefix of; "" when none is close.
func suggest(word string, candidates []string) string {
	best, bestDist := "", 0
	var prefixed []string
	for _, c := range candidates {
		if word == "" || c == word {
			continue
		}
		if strings.HasPrefix(c, word) {
			prefixed = append(prefixed, c)
		}
		d := editDistance(word, c)
		// On a tie, the candidate with the same first letter (fsh: fish rather than zsh).
		better := best == "" || d < bestDist || (d == bestDist && c[0] == word[0] && best[0] != word[0])
		if d <= min(2, max(1, len(word)/3)) && better {
			best, bestDist = c, d
		}
	}
	if best == "" && len(prefixed) == 1 {
		return prefixed[0]
	}
	return best
}

// editDistance is the number of insertions, deletions, substitutions and swaps of two
// neighbours that turn a into b (optimal string alignment; bytes: names are ASCII).
func editDistance(a, b string) int {
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}

// didYouMean is ". Did you mean X?" for a mistyped word among candidates, or "".
func didYouMean(word string, candidates []string, quote func(string) string) string {
	if s := suggest(word, candidates); s != "" {
		return ". Did you mean " + quote(s) + "?"
	}
	return ""
}

// subcommandNames are the visible subcommands of cmd.
func subcommandNames(cmd *command) []string {
	var names []string
	for _, s := range cmd.subs {
		if !s.hidden {
			names = append(names, s.name)
		}
	}
	return names
}

// unknownFlagHint is ". Did you mean --X?" for the flag package's "flag provided but not
// defined: -nme" among the flags of fs.
func unknownFlagHint(err error, fs *flag.FlagSet) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return ""
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	names = append(names, "help")
	return didYouMean(name, names, func(s string) string { return "--" + s })
}
