package exitdb_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/exitdb"
)

// These tests read what forget must leave without keys the way an attacker with the server's
// files would: the statistics catalogs as the superuser, and the relation files themselves
// (pg_read_binary_file of pg_relation_filepath, after a CHECKPOINT), searched for the bytes of
// every private key the import stored.

// untilDone waits for older snapshots as the command does by default: autovacuum's ANALYZE of
// the freshly loaded dump holds one for a moment.
var untilDone = exitdb.ForgetOptions{Wait: time.Minute}

// imported imports every identity of the generated dump and returns the database's DSN, a
// superuser connection to it, and every private key the import stored.
func imported(t *testing.T) (string, *pgx.Conn, [][]byte) {
	t.Helper()
	l := loadGenerated(t)
	_, err := l.open(t).Import(t.Context(), l.all())
	require.NoError(t, err)
	conn := connect(t, l.dsn)
	rows, err := conn.Query(t.Context(), `
		SELECT private_encryption_key FROM exit_user_keys
		UNION ALL SELECT private_encryption_key FROM exit_group_keys
		UNION ALL SELECT app_private_encryption_key FROM exit_provisional_keys
		UNION ALL SELECT tanker_private_encryption_key FROM exit_provisional_keys`)
	require.NoError(t, err)
	keys, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	require.NoError(t, err)
	require.Greater(t, len(keys), 10)
	for _, k := range keys {
		require.Len(t, k, 32)
	}
	return l.dsn, conn, keys
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// keysIn counts the keys found in text (as the hex PostgreSQL prints bytea in).
func keysIn(text string, keys [][]byte) int {
	n := 0
	for _, k := range keys {
		if strings.Contains(text, hex.EncodeToString(k)) {
			n++
		}
	}
	return n
}

// keysInStats counts the keys found in pg_stats, pg_stats_ext and, read directly,
// pg_statistic and pg_statistic_ext_data, for the exit_* tables.
func keysInStats(t *testing.T, conn *pgx.Conn, keys [][]byte) (inPgStats, inCatalogs int) {
	t.Helper()
	var views, catalogs string
	require.NoError(t, conn.QueryRow(t.Context(), `
		SELECT coalesce(string_agg(concat(most_common_vals::text, histogram_bounds::text), ' '), '')
		FROM pg_stats WHERE tablename LIKE 'exit\_%'`).Scan(&views))
	var ext string
	require.NoError(t, conn.QueryRow(t.Context(), `
		SELECT coalesce(string_agg(most_common_vals::text, ' '), '') FROM pg_stats_ext WHERE tablename LIKE 'exit\_%'`).Scan(&ext))
	require.NoError(t, conn.QueryRow(t.Context(), `
		SELECT coalesce(string_agg(concat(stavalues1::text, stavalues2::text, stavalues3::text, stavalues4::text, stavalues5::text), ' '), '')
		FROM pg_statistic WHERE starelid IN (SELECT oid FROM pg_class WHERE relname LIKE 'exit\_%')`).Scan(&catalogs))
	var extData string
	require.NoError(t, conn.QueryRow(t.Context(), `
		SELECT coalesce(string_agg(d.stxdmcv::text, ' '), '') FROM pg_statistic_ext_data d JOIN pg_statistic_ext s ON s.oid = d.stxoid
		WHERE s.stxrelid IN (SELECT oid FROM pg_class WHERE relname LIKE 'exit\_%')`).Scan(&extData))
	return keysIn(views+" "+ext, keys), keysIn(catalogs+" "+extData, keys)
}

// keysInFiles counts the keys whose bytes are in the files (main fork, and of the TOAST table)
// of the exit_* tables and of pg_statistic, after a CHECKPOINT wrote every page out.
func keysInFiles(t *testing.T, conn *pgx.Conn, keys [][]byte) map[string]int {
	t.Helper()
	_, err := conn.Exec(t.Context(), "CHECKPOINT")
	require.NoError(t, err)
	rows, err := conn.Query(t.Context(), `
		SELECT c.relname, pg_read_binary_file(pg_relation_filepath(c.oid))
		FROM pg_class c WHERE c.relname LIKE 'exit\_%' AND c.relkind = 'r' OR c.relname = 'pg_statistic'
		UNION ALL
		SELECT c.relname || ' (TOAST)', pg_read_binary_file(pg_relation_filepath(c.reltoastrelid))
		FROM pg_class c WHERE (c.relname LIKE 'exit\_%' AND c.relkind = 'r' OR c.relname = 'pg_statistic') AND c.reltoastrelid <> 0`)
	require.NoError(t, err)
	found := map[string]int{}
	var files int
	for rows.Next() {
		var name string
		var data []byte
		require.NoError(t, rows.Scan(&name, &data))
		files++
		for _, k := range keys {
			if bytes.Contains(data, k) {
				found[name]++
			}
		}
	}
	require.NoError(t, rows.Err())
	require.Equal(t, 2*(len(exitdb.ImportTables)+1), files, "every table's files were read")
	return found
}

// The statistics autovacuum's ANALYZE gathers hold private keys (here ANALYZE runs as
// autovacuum runs it, and an extended MCV statistics object is there too); forget replaces
// them: neither pg_stats nor the catalogs behind it, nor the files of pg_statistic, hold a key.
func TestForgetClearsStatistics(t *testing.T) {
	dsn, conn, keys := imported(t)
	_, err := conn.Exec(t.Context(), `CREATE STATISTICS exit_user_keys_pair (mcv) ON public_encryption_key, private_encryption_key FROM exit_user_keys`)
	require.NoError(t, err)
	for _, table := range exitdb.ImportTables {
		_, err := conn.Exec(t.Context(), "ANALYZE "+table)
		require.NoError(t, err)
	}
	views, catalogs := keysInStats(t, conn, keys)
	require.Positive(t, views, "ANALYZE copied keys into pg_stats")
	require.Positive(t, catalogs)
	require.NotEmpty(t, keysInFiles(t, conn, keys))

	_, err = exitdb.Forget(t.Context(), dsn, untilDone)
	require.NoError(t, err)
	views, catalogs = keysInStats(t, conn, keys)
	require.Zero(t, views, "keys left in pg_stats")
	require.Zero(t, catalogs, "keys left in pg_statistic or pg_statistic_ext_data")
	require.Empty(t, keysInFiles(t, conn, keys), "keys left in the files")
	var rows int
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT count(*) FROM pg_stats WHERE tablename LIKE 'exit\_%'
		AND (most_common_vals IS NOT NULL OR histogram_bounds IS NOT NULL)`).Scan(&rows))
	require.Zero(t, rows, "the statistics describe no row")

	// Forgetting again (nothing to delete) keeps it so.
	_, err = exitdb.Forget(t.Context(), dsn, untilDone)
	require.NoError(t, err)
	require.Empty(t, keysInFiles(t, conn, keys))
}

// holdSnapshot opens a REPEATABLE READ transaction on dsn and takes its snapshot with stmt; it
// returns the session's pid and a function that ends it.
func holdSnapshot(t *testing.T, dsn, stmt string) (int32, func()) {
	t.Helper()
	conn := connect(t, dsn)
	var pid int32
	require.NoError(t, conn.QueryRow(t.Context(), "SELECT pg_backend_pid()").Scan(&pid))
	_, err := conn.Exec(t.Context(), "SET application_name = 'snapshot-holder'")
	require.NoError(t, err)
	tx, err := conn.BeginTx(t.Context(), pgx.TxOptions{IsoLevel: pgx.RepeatableRead})
	require.NoError(t, err)
	_, err = tx.Exec(t.Context(), stmt)
	require.NoError(t, err)
	return pid, func() { require.NoError(t, tx.Commit(context.Background())) }
}

// A session whose snapshot predates the delete keeps the deleted rows in the rewritten files
// (and, when it read the table, holds a lock that VACUUM FULL waits for): forget with a short
// wait fails naming it, the rows deleted but their keys still in the files (pg_stats already
// shows none); once the session ends, forget again succeeds and no key is left in the files.
func TestForgetFailsWhileOlderSnapshotHeld(t *testing.T) {
	for _, tc := range []struct{ name, stmt string }{
		{"snapshot", "SELECT 1"},
		{"snapshot and lock", "SELECT count(*) FROM exit_user_keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn, conn, keys := imported(t)
			for _, table := range exitdb.ImportTables {
				_, err := conn.Exec(t.Context(), "ANALYZE "+table)
				require.NoError(t, err)
			}
			pid, end := holdSnapshot(t, dsn, tc.stmt)

			deleted, err := exitdb.Forget(t.Context(), dsn, exitdb.ForgetOptions{Wait: 500 * time.Millisecond})
			var held *exitdb.HeldError
			require.ErrorAs(t, err, &held)
			require.NotEmpty(t, held.Relations)
			var named bool
			for _, h := range held.Holders {
				if h.PID == pid {
					named = true
					require.Equal(t, "snapshot-holder", h.Application)
					require.False(t, h.Since.IsZero())
				}
			}
			require.True(t, named, "the holder is named: %v", err)
			require.Contains(t, err.Error(), fmt.Sprintf("session pid %d (user postgres, application snapshot-holder, since ", pid))
			require.NotEmpty(t, deleted, "the counts come with the error")
			var left int
			require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM exit_user_keys").Scan(&left))
			require.Zero(t, left, "the rows are deleted")
			require.NotEmpty(t, keysInFiles(t, conn, keys), "the files still hold keys, as forget said")
			views, _ := keysInStats(t, conn, keys)
			require.Zero(t, views, "pg_stats shows no key meanwhile")

			end()
			_, err = exitdb.Forget(t.Context(), dsn, exitdb.ForgetOptions{Wait: time.Minute})
			require.NoError(t, err)
			require.Empty(t, keysInFiles(t, conn, keys))
			views, catalogs := keysInStats(t, conn, keys)
			require.Zero(t, views+catalogs)
		})
	}
}

// When the session holding an older snapshot (or a lock) ends while forget waits, forget
// finishes and no key is left in the files.
func TestForgetWaitsForOlderSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name, stmt string
		waiting    string // true once forget waits for the holder
	}{
		// The first rewrite is done (a new file) and kept the rows.
		{"snapshot", "SELECT 1", `SELECT pg_relation_filenode('exit_user_keys') <> $1`},
		// VACUUM FULL waits for the lock.
		{"snapshot and lock", "SELECT count(*) FROM exit_user_keys",
			`SELECT $1::oid IS NOT NULL AND EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted AND relation = 'exit_user_keys'::regclass)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn, conn, keys := imported(t)
			var filenode uint32
			require.NoError(t, conn.QueryRow(t.Context(), `SELECT pg_relation_filenode('exit_user_keys')`).Scan(&filenode))
			_, end := holdSnapshot(t, dsn, tc.stmt)

			done := make(chan error, 1)
			go func() {
				_, err := exitdb.Forget(context.Background(), dsn, exitdb.ForgetOptions{Wait: 10 * time.Minute})
				done <- err
			}()
			for waiting := false; !waiting; {
				select {
				case err := <-done:
					t.Fatalf("forget returned while the snapshot was held: %v", err)
				case <-time.After(50 * time.Millisecond):
				}
				require.NoError(t, conn.QueryRow(t.Context(), tc.waiting, filenode).Scan(&waiting))
			}
			end()
			require.NoError(t, <-done)
			require.Empty(t, keysInFiles(t, conn, keys))
		})
	}
}

// withUser returns dsn with its user replaced (pgtest trusts every local login).
func withUser(t *testing.T, dsn, user string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	require.NoError(t, err)
	u.User = url.User(user)
	return u.String()
}

// A role that may not rewrite pg_statistic (neither the database owner nor a superuser), or
// may not insert and delete rows of the tables, is refused before anything is deleted; the
// database owner with those privileges forgets, although the tables belong to another role.
func TestForgetRefusesRoleThatCannotRewrite(t *testing.T) {
	dsn, conn, keys := imported(t)
	var db string
	require.NoError(t, conn.QueryRow(t.Context(), `SELECT current_database()`).Scan(&db))
	role := "forget_" + db
	for _, sql := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"GRANT SELECT, DELETE ON ALL TABLES IN SCHEMA public TO " + role,
	} {
		_, err := conn.Exec(t.Context(), sql)
		require.NoError(t, err)
	}
	t.Cleanup(func() {
		for _, sql := range []string{"ALTER DATABASE " + db + " OWNER TO postgres", "DROP OWNED BY " + role, "DROP ROLE " + role} {
			_, err := conn.Exec(context.Background(), sql)
			require.NoError(t, err)
		}
	})
	for _, table := range exitdb.ImportTables {
		_, err := conn.Exec(t.Context(), "ANALYZE "+table)
		require.NoError(t, err)
	}
	count := func() int {
		var n int
		require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM exit_user_keys").Scan(&n))
		return n
	}
	rows := count()
	asRole := withUser(t, dsn, role)

	_, err := exitdb.Forget(t.Context(), asRole, untilDone)
	require.ErrorContains(t, err, "it rewrites pg_statistic, whose file keeps the statistics PostgreSQL replaces")
	require.ErrorContains(t, err, "needs the owner of the database (postgres) or a superuser")
	require.Equal(t, rows, count())

	_, err = conn.Exec(t.Context(), "ALTER DATABASE "+db+" OWNER TO "+role)
	require.NoError(t, err)
	_, err = exitdb.Forget(t.Context(), asRole, untilDone)
	require.ErrorContains(t, err, "it deletes the rows of exit_group_keys, exit_identities, exit_provisional_keys, exit_user_keys "+
		"and analyses a placeholder row there, which needs SELECT, INSERT and DELETE on them")
	require.Equal(t, rows, count())

	_, err = conn.Exec(t.Context(), "GRANT INSERT ON ALL TABLES IN SCHEMA public TO "+role)
	require.NoError(t, err)
	_, err = exitdb.Forget(t.Context(), asRole, untilDone)
	require.NoError(t, err)
	require.Zero(t, count())
	require.Empty(t, keysInFiles(t, conn, keys))
	views, catalogs := keysInStats(t, conn, keys)
	require.Zero(t, views+catalogs)
}
