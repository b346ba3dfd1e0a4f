package exitclient

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
)

// maxNameProblems bounds the output name problems a refusal lists (then a count).
const maxNameProblems = 10

// checkOutputNames refuses, before anything is written, a run whose outputs would overwrite or
// hide one another under --out (rels are the input files relative to --in, suffix the one
// DecryptOptions adds): a *ConfigError naming each input concerned. An output path with a
// component that ends in PartSuffix is refused: the part file of another output could bear
// that name (x and x.idvault-part), and writing x removes a part file left there as stale,
// which would be the other's finished output.
func checkOutputNames(rels []string, suffix string) error {
	var problems []string
	for _, rel := range rels {
		comps := strings.Split(rel+suffix, string(filepath.Separator))
		for i, comp := range comps {
			if strings.HasSuffix(comp, PartSuffix) {
				problems = append(problems, fmt.Sprintf("%q: %q ends in %s, the suffix of the part files clear files are written to", rel, strings.Join(comps[:i+1], string(filepath.Separator)), PartSuffix))
				break
			}
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
	return &ConfigError{Msg: fmt.Sprintf("--in: %d inputs would collide under --out, nothing written (rename them): %s%s",
		len(problems), strings.Join(problems, "; "), more)}
}
