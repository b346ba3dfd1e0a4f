package exitdb_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// Import, forget, and the keys are gone: every exit_* table the import fills is empty, the
// counts are the rows that were there, and a decrypt through a fresh instance is key_not_found.
// Counting alone changes nothing.
func TestForgetDeletesEveryImportedKey(t *testing.T) {
	l := loadGenerated(t)
	db := l.open(t)
	_, err := db.Import(t.Context(), l.all())
	require.NoError(t, err)
	var okFile string
	for _, e := range l.manifest {
		if e.Expected == dump.ExpectOK {
			okFile = filepath.Join(l.dir, e.File)
			break
		}
	}
	_, _, err = decryptFile(t, db, okFile)
	require.NoError(t, err)

	conn, err := pgx.Connect(t.Context(), l.dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	// Every exit_* table of the database is one Forget empties.
	rows, err := conn.Query(t.Context(), `SELECT tablename FROM pg_tables WHERE tablename LIKE 'exit\_%' ORDER BY 1`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.ElementsMatch(t, exitdb.ImportTables, tables)
	count := func(table string) int64 {
		var n int64
		require.NoError(t, conn.QueryRow(t.Context(), "SELECT count(*) FROM "+table).Scan(&n))
		return n
	}
	before := map[string]int64{}
	for _, table := range exitdb.ImportTables {
		before[table] = count(table)
		require.Positive(t, before[table], table)
	}

	others, err := exitdb.OtherSessions(t.Context(), l.dsn)
	require.NoError(t, err)
	require.Positive(t, others, "the open instance and this test's connection")

	counted, err := exitdb.CountImported(t.Context(), l.dsn)
	require.NoError(t, err)
	for _, c := range counted {
		require.True(t, c.Exists)
		require.Equal(t, before[c.Table], c.Rows, c.Table)
		require.Equal(t, before[c.Table], count(c.Table), "counting deleted rows of %s", c.Table)
	}

	deleted, err := exitdb.Forget(t.Context(), l.dsn, untilDone)
	require.NoError(t, err)
	require.Len(t, deleted, len(exitdb.ImportTables))
	for _, d := range deleted {
		require.Equal(t, before[d.Table], d.Rows, d.Table)
		require.Zero(t, count(d.Table), d.Table)
	}
	// The dump's own tables are untouched.
	require.Positive(t, count("key_publishes"))

	fresh := l.open(t)
	_, _, err = decryptFile(t, fresh, okFile)
	require.ErrorIs(t, err, encryption.ErrKeyNotFound)

	again, err := exitdb.Forget(t.Context(), l.dsn, untilDone)
	require.NoError(t, err)
	for _, d := range again {
		require.Zero(t, d.Rows)
	}
}

// On a database no exit server ever opened, there is nothing to forget: the tables are
// reported absent, and nothing is created.
func TestForgetWithoutExitTables(t *testing.T) {
	dsn := newDSN(t)
	got, err := exitdb.Forget(t.Context(), dsn, exitdb.ForgetOptions{})
	require.NoError(t, err)
	for _, d := range got {
		require.False(t, d.Exists)
		require.Equal(t, d.Table+": absent", d.String())
	}
	_, err = exitdb.Forget(t.Context(), "postgres://u:hunter2@127.0.0.1:1/x?sslmode=disable&connect_timeout=bad", exitdb.ForgetOptions{})
	require.Error(t, err)
	require.NotContains(t, err.Error(), "hunter2")
}
