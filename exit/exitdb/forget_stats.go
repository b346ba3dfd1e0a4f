package exitdb

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ANALYZE copies sampled column values into pg_statistic (most common values, histogram
// bounds) and, for extended statistics, into pg_statistic_ext_data: for the exit_* tables,
// private keys. ANALYZE of an empty table writes nothing and leaves the old statistics in
// place, so Forget replaces them by analysing a placeholder row that holds no key (empty
// values), inserted and deleted in one transaction: ANALYZE samples the rows its own
// transaction inserted, and a table owner may run it, where deleting from pg_statistic needs
// a superuser.

// placeholderRows are the INSERTs of the placeholder row of each of ImportTables.
var placeholderRows = map[string]string{
	"exit_identities":       `INSERT INTO exit_identities (trustchain_id, kind, identity_id, imported_at) VALUES ('', '', '', '-infinity')`,
	"exit_user_keys":        `INSERT INTO exit_user_keys (trustchain_id, public_encryption_key, private_encryption_key) VALUES ('', '', '')`,
	"exit_group_keys":       `INSERT INTO exit_group_keys (trustchain_id, public_encryption_key, private_encryption_key) VALUES ('', '', '')`,
	"exit_provisional_keys": `INSERT INTO exit_provisional_keys (trustchain_id, app_public_signature_key, tanker_public_signature_key, app_private_encryption_key, tanker_private_encryption_key) VALUES ('', '', '', '', '')`,
}

// placeholderValues are the placeholder row's values as the statistics views print them
// (bytea in hex and escape output, text, timestamptz): any other value in the statistics of
// ImportTables comes from a row.
const placeholderValues = `('', '\x', '-infinity')`

// replaceStats replaces the statistics of tables (which must exist and be empty but for rows
// this transaction deleted) by those of the placeholder row, in one transaction, and returns
// its transaction ID: VACUUM removes the statistics it replaced once no snapshot is as old.
func replaceStats(ctx context.Context, conn *pgx.Conn, tables []string) (xid string, err error) {
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, t := range tables {
			for _, sql := range []string{"LOCK TABLE " + t + " IN EXCLUSIVE MODE", placeholderRows[t], "ANALYZE " + t, "DELETE FROM " + t} {
				if _, err := tx.Exec(ctx, sql); err != nil {
					return err
				}
			}
		}
		return tx.QueryRow(ctx, xidArg).Scan(&xid)
	})
	return xid, err
}

// statsWithValues returns the tables whose statistics (pg_stats, and pg_stats_ext and
// pg_stats_ext_exprs where the server has them) hold a value other than the placeholder's.
func statsWithValues(ctx context.Context, conn *pgx.Conn, tables []string) ([]string, error) {
	var hasExt, hasExprs bool
	err := conn.QueryRow(ctx, `SELECT to_regclass('pg_catalog.pg_stats_ext') IS NOT NULL,
		to_regclass('pg_catalog.pg_stats_ext_exprs') IS NOT NULL`).Scan(&hasExt, &hasExprs)
	if err != nil {
		return nil, err
	}
	// Each view's arrays, as text[] (multidimensional ones flatten in unnest).
	views := []string{`SELECT schemaname, tablename, most_common_vals::text::text[] || histogram_bounds::text::text[] ||
		most_common_elems::text::text[] AS vals FROM pg_stats`}
	if hasExt {
		// pg_stats_ext's most_common_vals is text[] already (12+).
		views = append(views, `SELECT schemaname, tablename, most_common_vals AS vals FROM pg_stats_ext`)
	}
	if hasExprs {
		views = append(views, `SELECT schemaname, tablename, most_common_vals::text::text[] || histogram_bounds::text::text[] ||
			most_common_elems::text::text[] AS vals FROM pg_stats_ext_exprs`)
	}
	rows, err := conn.Query(ctx, `
		SELECT t FROM unnest($1::text[]) AS t
		WHERE EXISTS (
			SELECT 1 FROM (`+strings.Join(views, " UNION ALL ")+`) AS s
			WHERE to_regclass(format('%I.%I', s.schemaname, s.tablename)) = to_regclass(t)
				AND EXISTS (SELECT 1 FROM unnest(s.vals) AS v WHERE v NOT IN `+placeholderValues+`))
		ORDER BY 1`, tables)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
