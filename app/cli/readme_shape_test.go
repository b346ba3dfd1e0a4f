package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The README is read in minutes: at most 400 lines and 40 KB, no line over 120 columns outside
// code blocks, and a table of contents on its first screen that leads to install, production,
// upgrade and the order of an exit.
func TestReadmeIsShort(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	require.LessOrEqual(t, len(raw), 40*1024, "README.md is over 40 KB")
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	require.LessOrEqual(t, len(lines), 400, "README.md is over 400 lines: move reference material into a guide")
	fenced := false
	for i, line := range lines {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		require.True(t, fenced || utf8.RuneCountInString(line) <= 120, "README.md:%d is over 120 columns", i+1)
	}
	first := strings.Join(lines[:min(40, len(lines))], "\n")
	require.Contains(t, first, "**Contents:**", "the table of contents is on the first screen")
	for _, anchor := range []string{"#install", "#quick-start", "#production", "#upgrade", "#the-exit-tool", "#guides"} {
		require.Contains(t, first, "]("+anchor+")", "the first screen's contents link %s", anchor)
	}
}

// Every guide of the repository is in the README's index of guides, and opens, after its
// title, with who it is for.
func TestReadmeIndexesEveryGuide(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	raw, err := os.ReadFile(filepath.Join(root, "README.md"))
	require.NoError(t, err)
	readme := string(raw)
	start := strings.Index(readme, "\n## Guides\n")
	require.Positive(t, start, "README.md has a Guides section")
	index := readme[start+1:]
	if end := strings.Index(index[1:], "\n## "); end >= 0 {
		index = index[:end+1]
	}
	firstParagraph := regexp.MustCompile(`(?s)\A# [^\n]+\n\n([^\n]+)`)
	for _, doc := range markdownFiles(t, root) {
		if doc == "README.md" {
			continue
		}
		require.Contains(t, index, "]("+doc+")", "the README's Guides section links %s", doc)
		text, err := os.ReadFile(filepath.Join(root, doc))
		require.NoError(t, err)
		m := firstParagraph.FindStringSubmatch(string(text))
		require.NotNil(t, m, "%s opens with a title and a paragraph", doc)
		require.True(t, strings.HasPrefix(m[1], "For "), "%s says first who it is for (\"For ...\"), not %q", doc, m[1])
	}
}
