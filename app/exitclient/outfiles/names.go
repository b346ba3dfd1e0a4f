package outfiles

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// maxNameProblems bounds the output name problems a refusal lists (then a count).
const maxNameProblems = 10

// CheckNames refuses, before anything is written, a run whose outputs would overwrite or
// hide one another under --out (rels are the input files relative to --in, suffix the one
// added to each output's name): an error naming each input concerned.
//
//   - An output path with a component that ends in PartSuffix: the part file of another output
//     could bear that name (x and x.idvault-part), and writing x removes a part file left there
//     as stale, which would be the other's finished output.
//   - Unless exact, two outputs whose paths are equal once case-folded and NFC-normalised (A.bin
//     and a.bin, or café written in NFC and in NFD), or an output file whose path is so equal to
//     a directory another output needs: macOS's default volumes (APFS, HFS+) fold both, so the
//     second would be skipped as already done, never decrypted. exact is for volumes that tell
//     such names apart (Linux's usual file systems).
//
// With exact false, the part-file suffix is matched folded too (x.IDVAULT-PART). Folding is
// Unicode's full case folding (straße = STRASSE), wider than some volumes': a name refused
// needlessly costs a rename, a collision missed costs a file never decrypted.
func CheckNames(rels []string, suffix string, exact bool) error {
	key := func(s string) string { return s }
	if !exact {
		fold := cases.Fold()
		key = func(s string) string {
			for i := 0; i < len(s); i++ {
				if s[i] >= utf8.RuneSelf {
					return norm.NFC.String(fold.String(norm.NFC.String(s)))
				}
			}
			return strings.ToLower(s) // ASCII: folding is lowering, and NFC changes nothing
		}
	}
	partKey := key(PartSuffix)
	var problems []string
	files := map[string]string{} // key of an output file -> the input it comes from
	dirs := map[string]string{}  // key of a directory outputs need -> one input needing it
	seen := map[string]bool{}    // directories (as named) already in dirs
	for _, rel := range rels {
		out := rel + suffix
		comps := strings.Split(out, string(filepath.Separator))
		for i, comp := range comps {
			if strings.HasSuffix(key(comp), partKey) {
				problems = append(problems, fmt.Sprintf("%q: %q ends in %s, the suffix of the part files clear files are written to", rel, strings.Join(comps[:i+1], string(filepath.Separator)), PartSuffix))
				break
			}
		}
		if k := key(out); files[k] == "" {
			files[k] = rel
		} else {
			problems = append(problems, fmt.Sprintf("%q and %q: their outputs differ only by case or Unicode normalisation", files[k], rel))
		}
		for dir := filepath.Dir(out); dir != "." && !seen[dir]; dir = filepath.Dir(dir) {
			seen[dir] = true // and so were the directories above it
			if k := key(dir); dirs[k] == "" {
				dirs[k] = rel
			}
		}
	}
	for k, rel := range files {
		if other := dirs[k]; other != "" {
			problems = append(problems, fmt.Sprintf("%q and %q: the first's output is, up to case or Unicode normalisation, a directory the second's needs", rel, other))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	more := ""
	if len(problems) > maxNameProblems {
		more = fmt.Sprintf("; and %d more", len(problems)-maxNameProblems)
		problems = problems[:maxNameProblems]
	}
	hint := "rename these inputs"
	if !exact {
		hint += ", or pass --exact-names if --out's volume tells apart names that differ only by case or Unicode normalisation (not macOS's default)"
	}
	return fmt.Errorf("--in: %d inputs would collide under --out, nothing written (%s): %s%s",
		len(problems), hint, strings.Join(problems, "; "), more)
}
