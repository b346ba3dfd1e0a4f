package exitdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// ImportTables are the tables Import fills, for every app of the database: the list of imported
// identities and every key derived from them (user, group and provisional private keys, in
// clear). Forget empties them.
var ImportTables = []string{"exit_identities", "exit_user_keys", "exit_group_keys", "exit_provisional_keys"}

// TableRows is the number of rows of one of ImportTables; Exists is false when the table was
// never created (no exit server ever opened the database).
type TableRows struct {
	Table  string
	Rows   int64
	Exists bool
}

// CountImported counts the rows of ImportTables in the database at dsn, changing nothing.
func CountImported(ctx context.Context, dsn string) ([]TableRows, error) {
	conn, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var out []TableRows
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly, IsoLevel: pgx.RepeatableRead}, func(tx pgx.Tx) error {
		out, err = countRows(ctx, tx, true)
		return err
	})
	return out, dbError(ctx, "count imported keys", err)
}

// ForgetOptions configures Forget.
type ForgetOptions struct {
	// Wait bounds how long Forget waits for what keeps the deleted rows in the files
	// (snapshots older than the delete, locks on the tables); 0 rewrites once and does not
	// wait.
	Wait time.Duration
}

// Forget deletes every row of ImportTables in one transaction (holding the tables against
// concurrent imports) and leaves no key of them readable in the database: it rewrites the
// tables (VACUUM FULL) and checks that their new files hold no row, replaces their statistics
// (which ANALYZE fills with sampled keys) by those of a placeholder row holding no key, and
// rewrites pg_statistic, which keeps the replaced statistics otherwise. A snapshot older than
// the delete (an open REPEATABLE READ transaction, a pg_dump, a prepared transaction, a
// replication slot) makes VACUUM keep the deleted rows: Forget waits for such holders up to
// opts.Wait, then returns a *HeldError naming them; the rows are deleted by then, and
// running Forget again once the holders are gone finishes the work.
//
// It returns the rows deleted per table. The role must own the database or be a superuser (to
// rewrite pg_statistic), and may select, insert and delete rows of the tables: otherwise Forget
// refuses before deleting anything. Copies remain
// where PostgreSQL keeps history (write-ahead log, backups, free disk blocks, the server log):
// the exit guide says so. An exit server running on the database keeps the keys it has
// resolved in memory until it stops.
func Forget(ctx context.Context, dsn string, opts ForgetOptions) ([]TableRows, error) {
	f, err := newForgetter(ctx, dsn, opts.Wait)
	if err != nil {
		return nil, err
	}
	defer f.conn.Close(context.Background())
	out, err := countRows(ctx, f.conn, false)
	if err != nil {
		return nil, dbError(ctx, "forget imported keys", err)
	}
	var tables []string
	for _, t := range out {
		if t.Exists {
			tables = append(tables, t.Table)
		}
	}
	if len(tables) == 0 {
		return out, nil
	}
	if err := f.checkPrivileges(ctx, tables); err != nil {
		return nil, err
	}
	xid, err := f.deleteRows(ctx, out)
	if err != nil {
		return nil, dbError(ctx, "forget imported keys", err)
	}
	if err := f.rewriteUntilClean(ctx, xid, tables, false); err != nil {
		var held *HeldError
		if errors.As(err, &held) {
			// Meanwhile, pg_stats shows no key to those who may read the tables (the
			// sample skips the deleted rows); the rerun rewrites pg_statistic.
			if _, serr := replaceStats(ctx, f.conn, tables); serr == nil {
				f.takeNotices()
			}
		}
		return out, err
	}
	if xid, err = replaceStats(ctx, f.conn, tables); err != nil {
		return out, dbError(ctx, "forget imported keys: rows deleted, but replacing the statistics failed", err)
	}
	if err := f.warnings(); err != nil {
		return out, err
	}
	left, err := statsWithValues(ctx, f.conn, tables)
	if err != nil {
		return out, dbError(ctx, "forget imported keys: check the statistics", err)
	}
	if len(left) > 0 {
		return out, fmt.Errorf("exit database: forget: rows deleted, but the statistics of %s still hold their values after ANALYZE",
			strings.Join(left, ", "))
	}
	return out, f.rewriteUntilClean(ctx, xid, tables, true)
}

// deleteRows deletes every row of the tables of out that exist, in one transaction, sets
// their Rows to the rows deleted, and returns the transaction ID.
func (f *forgetter) deleteRows(ctx context.Context, out []TableRows) (xid string, err error) {
	err = pgx.BeginFunc(ctx, f.conn, func(tx pgx.Tx) error {
		for i, t := range out {
			if !t.Exists {
				continue
			}
			// EXCLUSIVE: reads go on, writes (an import) wait for the commit.
			if _, err := tx.Exec(ctx, "LOCK TABLE "+t.Table+" IN EXCLUSIVE MODE"); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, "DELETE FROM "+t.Table)
			if err != nil {
				return err
			}
			out[i].Rows = tag.RowsAffected()
		}
		return tx.QueryRow(ctx, xidArg).Scan(&xid)
	})
	return xid, err
}

// sessionsSettle is how long OtherSessions gives other sessions to end before it counts them: a
// backend outlives its client's exit by a moment, so an exit server stopped just before forget
// would still be counted.
const sessionsSettle = 2 * time.Second

// OtherSessions counts the sessions connected to the database at dsn besides its own: an exit
// server still running on it keeps the keys it resolved in memory after Forget. Sessions that
// end within sessionsSettle are not counted.
func OtherSessions(ctx context.Context, dsn string) (int, error) {
	conn, err := connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	deadline := time.Now().Add(sessionsSettle)
	for {
		var n int
		err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n)
		if err != nil || n == 0 || !time.Now().Before(deadline) {
			return n, dbError(ctx, "count other sessions", err)
		}
		select {
		case <-ctx.Done():
			return n, nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// querier is a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// countRows lists ImportTables, whether each exists, and with withRows its number of rows.
func countRows(ctx context.Context, tx querier, withRows bool) ([]TableRows, error) {
	out := make([]TableRows, len(ImportTables))
	for i, t := range ImportTables {
		out[i].Table = t
		if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, t).Scan(&out[i].Exists); err != nil {
			return nil, err
		}
		if !out[i].Exists || !withRows {
			continue
		}
		if err := tx.QueryRow(ctx, "SELECT count(*) FROM "+t).Scan(&out[i].Rows); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func connect(ctx context.Context, dsn string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, errInvalidDSN
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, dbError(ctx, "connect", err)
	}
	return conn, nil
}

// String reads "exit_user_keys: 12 rows".
func (t TableRows) String() string {
	if !t.Exists {
		return t.Table + ": absent"
	}
	return fmt.Sprintf("%s: %d rows", t.Table, t.Rows)
}
