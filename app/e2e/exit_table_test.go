package e2e_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

func (w *tableWorld) args(more ...string) []string {
	args := []string{"exit", "decrypt-table", "--from", w.src, "--to", w.dst, "--table", "msgs", "--key", "id",
		"--field", "body", "--field", "raw"}
	for _, u := range w.urls {
		args = append(args, "--url", u)
	}
	return append(args, more...)
}

var tableEnv = []string{"IDVAULT_EXIT__TOKEN=" + tableToken}

// The real binary over a gen-dump dump: the source in one database, the destination in
// another; exit 1 since the dump's negative cases fail, each keyed in the errors table; the
// --json summary; a rerun has nothing left to do; a destination that does not fit and
// another command on the same destination are refused (exit 2) before anything is written;
// --restart starts over.
func TestExitDecryptTable(t *testing.T) {
	t.Parallel()
	w := newTableWorld(t, 1, 2)
	out, errOut, code := apptest.RunCLI(t, w.dir, tableEnv, w.args("--to-table", "clear_msgs", "--json", "--batch-rows", "37")...)
	require.Equal(t, 1, code, "the negative cases fail: %s", errOut)
	failed := w.check(t, "clear_msgs")
	var sum struct {
		Rows        int64  `json:"rows"`
		Failed      int64  `json:"failed"`
		RowsThisRun int64  `json:"rows_this_run"`
		Status      string `json:"status"`
		ErrorsTable string `json:"errors_table"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sum), out)
	require.EqualValues(t, len(w.rows), sum.Rows)
	require.EqualValues(t, len(w.rows), sum.RowsThisRun)
	require.EqualValues(t, failed, sum.Failed)
	require.Equal(t, "failed", sum.Status)
	require.Equal(t, "clear_msgs_errors", sum.ErrorsTable)
	require.Contains(t, errOut, "listed in clear_msgs_errors")

	_, errOut, code = apptest.RunCLI(t, w.dir, tableEnv, w.args("--to-table", "clear_msgs", "--batch-rows", "37")...)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "(0 this run)")
	w.check(t, "clear_msgs")

	// Another command on the same destination: refused, unless --restart.
	args := w.args("--to-table", "clear_msgs", "--clear-type", "text")
	_, errOut, code = apptest.RunCLI(t, w.dir, tableEnv, args...)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "holds the progress of another command")

	// A destination that does not fit.
	tableSQL(t, w.dst, `CREATE TABLE odd (id bigint, file text, body text, raw bytea, n int)`)
	_, errOut, code = apptest.RunCLI(t, w.dir, tableEnv, w.args("--to-table", "odd")...)
	require.Equal(t, 2, code, errOut)
	require.Contains(t, errOut, "column body is text, not bytea")
	require.Equal(t, "0", tableSQL(t, w.dst, `SELECT count(*) FROM odd`))

	_, errOut, code = apptest.RunCLI(t, w.dir, tableEnv, w.args("--to-table", "clear_msgs", "--restart")...)
	require.Equal(t, 1, code, errOut)
	require.Contains(t, errOut, "this run)")
	w.check(t, "clear_msgs")

	// Only rows that decrypt, through --query: exit 0, status ok.
	var ok []string
	for _, r := range w.rows {
		if r.code == "" && len(r.body) > 0 && len(r.body) < 1<<20 {
			ok = append(ok, strconv.Itoa(r.id))
		}
	}
	q := "SELECT id, body FROM msgs WHERE id IN (" + strings.Join(ok, ", ") + ")"
	out, errOut, code = apptest.RunCLI(t, w.dir, tableEnv, "exit", "decrypt-table", "--url", w.urls[0], "--from", w.src, "--to", w.dst,
		"--query", q, "--key", "id", "--field", "body", "--to-table", "clear_ok", "--json")
	require.Equal(t, 0, code, errOut)
	require.Contains(t, out, `"status":"ok"`)
	require.Equal(t, strconv.Itoa(len(ok))+" 0", tableSQL(t, w.dst, `SELECT (SELECT count(*) FROM clear_ok WHERE body IS NOT NULL) || ' ' || (SELECT count(*) FROM clear_ok_errors)`))

	for name, args := range map[string][]string{
		"no source":        {"exit", "decrypt-table", "--from", w.src, "--key", "id", "--field", "body", "--to-table", "x"},
		"both sources":     w.args("--to-table", "x", "--query", "SELECT * FROM msgs"),
		"bad clear type":   w.args("--to-table", "x", "--clear-type", "json"),
		"no such column":   w.args("--to-table", "x", "--field", "nope"),
		"key not unique":   append(w.args("--to-table", "x")[:8], "--key", "file", "--field", "body"),
		"age and text":     w.args("--to-table", "x", "--clear-type", "text", "--age-recipient", "age1qyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqszqgpqyqs3290gq"),
		"bad token":        w.args("--to-table", "x", "--token", "wrong"),
		"source not there": w.args("--to-table", "x", "--from", strings.Replace(w.src, "/t", "/nosuchdb", 1)),
	} {
		_, errOut, code := apptest.RunCLI(t, w.dir, tableEnv, args...)
		require.Equal(t, 2, code, "%s: %s", name, errOut)
		require.Equal(t, "NULL", tableSQL(t, w.dst, `SELECT to_regclass('x')`), name)
	}
}
