package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/idvault/idvault/exit/exitdb"
)

// runExitForget is `idvault exit forget`: deletes the imported identities and every key
// derived from them (the exit_* tables) from the exit database, after an exit.
func runExitForget(ctx context.Context, p *prog, args []string) int {
	fs := p.newFlags("exit forget", "exit forget [--db DSN] [--yes]\n\n"+
		"Deletes from the exit database every imported identity and every key derived from them: the\n"+
		"rows of exit_identities, exit_user_keys, exit_group_keys and exit_provisional_keys (private\n"+
		"keys, in clear), for every app, then rewrites those tables. The dump's own tables stay. Without\n"+
		"--yes it only prints what it would delete and exits 2. Stop the exit servers first: a running\n"+
		"server keeps the keys it resolved in memory. A database without any of those tables is\n"+
		"refused (exit 1): no exit server ever ran on it, so it is not the exit database.")
	db := p.dbFlag(fs, "of the exit database")
	yes := fs.Bool("yes", false, "delete (without it: print what would be deleted, exit 2)")
	pos, code, ok := p.parse(fs, args)
	if !ok {
		return code
	}
	dsn := db()
	if dsn == "" || len(pos) > 0 {
		fmt.Fprintln(p.stderr, "idvault exit forget: --db DSN (or IDVAULT_EXIT__DB) and no argument are required")
		return exitUsage
	}
	if n, err := exitdb.OtherSessions(ctx, dsn); err == nil && n > 0 {
		fmt.Fprintf(p.stderr, "idvault exit forget: warning: %d other sessions are connected to this database; "+
			"an exit server still running keeps the keys it resolved in memory: stop it\n", n)
	}
	counts, err := exitdb.CountImported(ctx, dsn)
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault exit forget: %v\n", err)
		return exitFail
	}
	if noneExists(counts) {
		// Most likely the wrong database: deleting nothing there and exiting 0 would leave
		// the keys where they are while saying they are gone.
		printRows(p.stdout, counts)
		fmt.Fprintln(p.stderr, "idvault exit forget: this database holds none of the exit tables (no exit server ever ran on it): is --db the exit database? nothing deleted")
		return exitFail
	}
	if !*yes {
		total := printRows(p.stdout, counts)
		fmt.Fprintf(p.stderr, "idvault exit forget: would delete %d rows (listed above); nothing deleted: rerun with --yes\n", total)
		return exitUsage
	}
	deleted, err := exitdb.Forget(ctx, dsn)
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault exit forget: %v\n", err)
		return exitFail
	}
	total := printRows(p.stdout, deleted)
	fmt.Fprintf(p.stderr, "idvault exit forget: deleted %d rows: the imported identities and every key derived from them\n", total)
	return exitOK
}

// noneExists reports whether none of the tables exists.
func noneExists(rows []exitdb.TableRows) bool {
	for _, r := range rows {
		if r.Exists {
			return false
		}
	}
	return true
}

// printRows prints one line per table and returns the total.
func printRows(w io.Writer, rows []exitdb.TableRows) int64 {
	var total int64
	for _, r := range rows {
		fmt.Fprintln(w, r.String())
		total += r.Rows
	}
	return total
}
