package exitdb

import (
	"context"
	"fmt"

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

// Forget deletes every row of ImportTables in one transaction (holding the tables against
// concurrent imports), then rewrites the tables (VACUUM FULL) so that their files no longer
// hold the deleted keys. It returns the rows deleted per table. Copies may remain where
// PostgreSQL keeps history (write-ahead log, backups, free disk blocks): the exit tool's guide
// (exit/README.md, Forget) says so.
// An exit server running on the database keeps the keys it has resolved in memory until it
// stops.
func Forget(ctx context.Context, dsn string) ([]TableRows, error) {
	conn, err := connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(context.Background())
	var out []TableRows
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if out, err = countRows(ctx, tx, false); err != nil {
			return err
		}
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
		return nil
	})
	if err != nil {
		return nil, dbError(ctx, "forget imported keys", err)
	}
	for _, t := range out {
		if t.Exists {
			if _, err := conn.Exec(ctx, "VACUUM FULL "+t.Table); err != nil {
				return out, dbError(ctx, "forget imported keys: rows deleted, but rewriting "+t.Table+" failed", err)
			}
		}
	}
	return out, nil
}

// OtherSessions counts the sessions connected to the database at dsn besides its own: an exit
// server still running on it keeps the keys it resolved in memory after Forget.
func OtherSessions(ctx context.Context, dsn string) (int, error) {
	conn, err := connect(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid() AND backend_type = 'client backend'`).Scan(&n)
	return n, dbError(ctx, "count other sessions", err)
}

// countRows lists ImportTables, whether each exists, and with withRows its number of rows.
func countRows(ctx context.Context, tx pgx.Tx, withRows bool) ([]TableRows, error) {
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
