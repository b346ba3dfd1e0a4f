package loadgen_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// writeTable changes the table of the page and nothing else: the prose before and after it
// comes back byte for byte, and a second run replaces the first run's table.
func TestWriteTableRewritesOnlyTheTable(t *testing.T) {
	t.Parallel()
	before := "# Performance\n\nProse before, with a | pipe |.\n\n" + tableBegin + "\n"
	after := tableEnd + "\n\n## Where the time goes\n\nProse after.\n"
	path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
	require.NoError(t, os.WriteFile(path, []byte(before+"old table\nold note\n"+after), 0o644))

	require.NoError(t, writeTable(path, "\nmachine A\n\n| a | b |\n|---|---|\n"))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before+"\nmachine A\n\n| a | b |\n|---|---|\n"+after, string(got))

	require.NoError(t, writeTable(path, "machine B, no final newline"))
	got, err = os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, before+"machine B, no final newline\n"+after, string(got))
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	entries, err := os.ReadDir(filepath.Dir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left beside the page")
}

// A page whose markers are missing, repeated, out of order or not on lines of their own is
// refused and left as it was: the benchmark never writes its table into the prose.
func TestWriteTableRefusesAPageWithoutItsMarkers(t *testing.T) {
	t.Parallel()
	for name, page := range map[string]string{
		"none":         "# Performance\n\nprose\n",
		"begin only":   tableBegin + "\nx\n",
		"end only":     "x\n" + tableEnd + "\n",
		"reversed":     tableEnd + "\nx\n" + tableBegin + "\n",
		"twice":        tableBegin + "\na\n" + tableEnd + "\n" + tableBegin + "\nb\n" + tableEnd + "\n",
		"inside prose": "see " + tableBegin + "\nx\n" + tableEnd + "\n",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "PERFORMANCE.md")
			require.NoError(t, os.WriteFile(path, []byte(page), 0o644))
			err := writeTable(path, "table")
			require.ErrorIs(t, err, errNoTable)
			got, rerr := os.ReadFile(path)
			require.NoError(t, rerr)
			require.Equal(t, page, string(got))
		})
	}
}

// The repository's performance page is one make bench can write: one pair of markers, and
// between them a table that names the machine it ran on.
func TestPerformancePageHoldsTheGeneratedTable(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "PERFORMANCE.md"))
	require.NoError(t, err)
	_, err = replaceTable(raw, "x")
	require.NoError(t, err)
	page := string(raw)
	table := page[strings.Index(page, tableBegin)+len(tableBegin) : strings.Index(page, tableEnd)]
	require.Contains(t, table, "cores (GOMAXPROCS", "the table names the machine it ran on")
	require.Contains(t, table, "| figure | baseline (same run) |")
}

// The page's prose speaks in the present tense: figures come from the table, and how they moved
// from one run to the next belongs in commit messages, not on the page.
func TestPerformancePageHoldsNoRunHistory(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(filepath.Join("..", "PERFORMANCE.md"))
	require.NoError(t, err)
	page := string(raw)
	prose := page[:strings.Index(page, tableBegin)] + page[strings.Index(page, tableEnd):]
	for _, history := range []string{"the run of", "alternated", "tried and left out", "changes measured",
		"went from", "earlier runs", "this round", "before this change"} {
		require.NotContains(t, strings.ToLower(prose), history, "app/PERFORMANCE.md's prose tells run history")
	}
	require.NotRegexp(t, `\b[0-2]?[0-9]:[0-5][0-9]\b`, prose, "a time of day in the prose: the table's header names its run")
}
