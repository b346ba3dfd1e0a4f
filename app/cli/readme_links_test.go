package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// markdownFiles returns every Markdown file of the repository (paths from its root, with
// slashes): the README and the guides beside the code. Hidden directories, testdata, npm
// packages and test output are not the repository's documents, nor are files git ignores
// (`make bench` writes bench-exit-table.md at the root) when the tree is a git checkout.
func markdownFiles(t *testing.T, root string) []string {
	t.Helper()
	var docs []string
	require.NoError(t, filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() && path != root && (strings.HasPrefix(name, ".") || name == "testdata" ||
			name == "node_modules" || name == "test-output") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(name, ".md") {
			rel, err := filepath.Rel(root, path)
			require.NoError(t, err)
			docs = append(docs, filepath.ToSlash(rel))
		}
		return nil
	}))
	return withoutIgnored(root, docs)
}

// withoutIgnored drops from docs the files git ignores in the checkout at root; docs whole when
// root is not a checkout or git is missing.
func withoutIgnored(root string, docs []string) []string {
	cmd := exec.Command("git", "-C", root, "check-ignore", "--stdin")
	cmd.Stdin = strings.NewReader(strings.Join(docs, "\n") + "\n")
	out, err := cmd.Output() // exit 1: none is ignored
	if err != nil && len(out) == 0 {
		return docs
	}
	ignored := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		ignored[line] = true
	}
	var kept []string
	for _, d := range docs {
		if !ignored[d] {
			kept = append(kept, d)
		}
	}
	return kept
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`^#{1,6} +(.+?) *$`)
	slugDrop  = regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
)

// headingAnchors returns the anchors GitHub gives the headings of a Markdown text: lower case,
// punctuation dropped, spaces as hyphens, "-1", "-2"... for repeats. Fenced code is skipped.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		m := mdHeading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		slug := strings.ReplaceAll(slugDrop.ReplaceAllString(strings.ToLower(m[1]), ""), " ", "-")
		if n := seen[slug]; n > 0 {
			anchors[slug+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// Every Markdown file of the repository stands alone: every relative link names a file of the
// repository (never outside it), every #anchor a heading of its target, and none of them sends
// the reader to notes kept outside the repository.
func TestMarkdownLinksStayInTheRepository(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	read := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		require.NoError(t, err)
		return string(b)
	}
	docs := markdownFiles(t, root)
	require.Contains(t, docs, "README.md")
	for _, doc := range docs {
		text := read(doc)
		for _, outside := range []string{"exit-dump.md", "tanker.md", "shared/reference", "../shared"} {
			require.False(t, strings.Contains(text, outside), "%s refers to notes outside the repository: %s", doc, outside)
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, anchor, _ := strings.Cut(target, "#")
			rel := doc
			if path != "" {
				rel = filepath.ToSlash(filepath.Join(filepath.Dir(doc), path))
				require.False(t, rel == ".." || strings.HasPrefix(rel, "../"), "%s links outside the repository: %s", doc, target)
				_, err := os.Stat(filepath.Join(root, rel))
				require.NoError(t, err, "%s links to a missing file: %s", doc, target)
			}
			if anchor != "" {
				require.True(t, strings.HasSuffix(rel, ".md"), "%s: an anchor into a file that is not Markdown: %s", doc, target)
				require.True(t, headingAnchors(read(rel))[anchor], "%s links to a missing heading: %s", doc, target)
			}
		}
	}
}
