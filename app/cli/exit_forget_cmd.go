package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/idvault/idvault/exit/exitdb"
)

// exitForgetCommand is `idvault exit forget`: deletes the imported identities and every key
// derived from them (the exit_* tables) from the exit database, after an exit, and leaves none
// of them readable in the tables' files or statistics.
func exitForgetCommand() *command {
	return &command{
		name:    "forget",
		summary: "delete the imported identities and every key derived from them from the exit database",
		help: "Deletes from the exit database every imported identity and every key derived from them: the\n" +
			"rows of exit_identities, exit_user_keys, exit_group_keys and exit_provisional_keys (private\n" +
			"keys, in clear), for every app. Then it leaves no key readable in the database: it rewrites\n" +
			"those tables (VACUUM FULL) and checks their new files hold no row, replaces their statistics\n" +
			"(which ANALYZE, autovacuum's included, fills with sampled keys) and rewrites pg_statistic. The\n" +
			"dump's own tables stay. Without --yes it only prints what it would delete and exits 2.\n\n" +
			"A transaction whose snapshot is older than the delete (an open REPEATABLE READ transaction, a\n" +
			"pg_dump, a prepared transaction, a replication slot) makes PostgreSQL keep the deleted rows in\n" +
			"the files: forget waits for it (--wait), then exits 1 naming each (pid, user, application,\n" +
			"since when) with the rows deleted but possibly still in the files; end them and rerun.\n\n" +
			"Run it as the owner of the exit database (with SELECT, INSERT and DELETE on those tables, which\n" +
			"their owner has) or a superuser: anyone else is refused before anything is deleted. Stop the\n" +
			"exit servers first: a running server keeps the keys it resolved in memory. A database without any\n" +
			"of those tables is refused (exit 1): no exit server ever ran on it, so it is not the exit\n" +
			"database. Copies outside the live tables are not reached (write-ahead log, backups, the\n" +
			"server log): the summary lists them.",
		setup: func(c *cmdline) runFunc {
			db := dbFlag(c, "of the exit database")
			yes := c.Bool("yes", false, "delete (without it: print what would be deleted, exit 2)")
			wait := c.Duration("wait", time.Minute, "how long to wait for older snapshots and locks that keep the deleted rows in the files (0: do not wait)")
			return func(ctx context.Context, args []string) int {
				p := c.p
				dsn := db()
				if dsn == "" || len(args) > 0 {
					fmt.Fprintln(p.stderr, "idvault exit forget: --db DSN (or IDVAULT_EXIT__DB) and no argument are required")
					return exitUsage
				}
				if *wait < 0 {
					fmt.Fprintln(p.stderr, "idvault exit forget: --wait must not be negative")
					return exitUsage
				}
				if code, ok := p.forgetCheck(ctx, dsn, *yes); !ok {
					return code
				}
				return p.forget(ctx, dsn, *wait)
			}
		},
	}
}

// forgetCheck counts what forget would delete from the database dsn names, and says whether
// to go on (without --yes it prints the counts and stops, exit 2; so does a database that holds
// none of the exit tables, exit 1).
func (p *prog) forgetCheck(ctx context.Context, dsn string, yes bool) (code int, ok bool) {
	if n, err := exitdb.OtherSessions(ctx, dsn); err == nil && n > 0 {
		fmt.Fprintf(p.stderr, "idvault exit forget: warning: %d other sessions are connected to this database; "+
			"an exit server still running keeps the keys it resolved in memory: stop it\n", n)
	}
	counts, err := exitdb.CountImported(ctx, dsn)
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault exit forget: %v\n", err)
		return exitFail, false
	}
	if noneExists(counts) {
		// Most likely the wrong database: deleting nothing there and exiting 0 would leave
		// the keys where they are while saying they are gone.
		printRows(p.stdout, counts)
		fmt.Fprintln(p.stderr, "idvault exit forget: this database holds none of the exit tables (no exit server ever ran on it): is --db the exit database? nothing deleted")
		return exitFail, false
	}
	if !yes {
		n := printRows(p.stdout, counts)
		fmt.Fprintf(p.stderr, "idvault exit forget: would delete %d rows (listed above); nothing deleted: rerun with --yes\n", n)
		return exitUsage, false
	}
	return 0, true
}

// forget deletes the imported identities and their keys, and reports what it did.
func (p *prog) forget(ctx context.Context, dsn string, wait time.Duration) int {
	deleted, err := exitdb.Forget(ctx, dsn, exitdb.ForgetOptions{Wait: wait})
	if deleted != nil {
		printRows(p.stdout, deleted)
	}
	var held *exitdb.HeldError
	switch {
	case errors.As(err, &held):
		printHeld(p.stderr, held)
		return exitFail
	case err != nil && deleted == nil:
		fmt.Fprintln(p.stderr, failure("exit forget", err)+"; nothing deleted")
		return exitFail
	case err != nil:
		// Deleted (the counts are above), but not all rewritten or replaced.
		fmt.Fprintln(p.stderr, failure("exit forget", err))
		fmt.Fprintln(p.stderr, "idvault exit forget: not done: the rows are deleted, but their keys may still be in the tables' files or statistics: rerun: idvault exit forget --yes (with the same --db)")
		return exitFail
	}
	fmt.Fprintf(p.stderr, "idvault exit forget: deleted %d rows: the imported identities and every key derived from them; "+
		"the tables' files and statistics hold none of them\n", total(deleted))
	fmt.Fprint(p.stderr, leftByDesign)
	return exitOK
}

// leftByDesign is what forget does not reach, and where.
const leftByDesign = `idvault exit forget: copies it does not reach, by design:
  - the write-ahead log (pg_wal, and any WAL archive) holds the rows until checkpoints recycle its segments
  - backups of the database (pg_dump files, base backups, snapshots of the disk) hold them as they were
  - the dump's own tables stay, tanker_provisional_keys among them (the service-held half of provisional identities)
  - the server log holds whatever statement logging (log_statement, auto_explain) or error messages wrote there
  - free blocks of the disk hold the files PostgreSQL rewrote until the file system reuses them
  drop the database (dropdb) and remove the dump and its backups when the exit is done
`

// printHeld says that the rows are deleted but may still be in the files, names what holds
// them, how to end each, and the command to rerun.
func printHeld(w io.Writer, e *exitdb.HeldError) {
	fmt.Fprintf(w, "idvault exit forget: the rows are deleted, but the files of %s may still hold them: "+
		"PostgreSQL keeps them for snapshots older than the delete (after waiting %s; --wait sets how long)\n",
		strings.Join(e.Relations, ", "), e.Waited.Round(time.Second))
	if len(e.Holders) == 0 {
		fmt.Fprintln(w, "idvault exit forget: no older snapshot or lock is left now")
	}
	for _, h := range e.Holders {
		var end string
		switch h.Kind {
		case "session":
			end = fmt.Sprintf("end its transaction (COMMIT or ROLLBACK there), or SELECT pg_terminate_backend(%d)", h.PID)
		case "prepared transaction":
			gid := "'" + strings.ReplaceAll(h.Name, "'", "''") + "'"
			end = "COMMIT PREPARED " + gid + " or ROLLBACK PREPARED " + gid
		default:
			end = "let its consumer catch up, or SELECT pg_drop_replication_slot('" + strings.ReplaceAll(h.Name, "'", "''") + "')"
		}
		fmt.Fprintf(w, "  held by %s: %s\n", h, end)
	}
	fmt.Fprintln(w, "idvault exit forget: not done: once they are gone, rerun: idvault exit forget --yes (with the same --db)")
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
	for _, r := range rows {
		fmt.Fprintln(w, r.String())
	}
	return total(rows)
}

// total is the number of rows of all tables.
func total(rows []exitdb.TableRows) int64 {
	var n int64
	for _, r := range rows {
		n += r.Rows
	}
	return n
}
