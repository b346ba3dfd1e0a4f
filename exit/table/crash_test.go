package table_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/pgtest"
	"github.com/idvault/idvault/exit/table"
)

// The batches commit without waiting for the disk, the run's end with the database's
// synchronous_commit: with it on, PostgreSQL crashing right after a run loses none of the rows
// the run counted. Not parallel: it crashes the cluster of every test of the package.
func TestDecryptTableEndIsOnDisk(t *testing.T) {
	from, to := source(t, 2000), pgtest.NewDB(t)
	exec(t, to, `CREATE TYPE mood AS ENUM ('sad', 'ok')`,
		`DO $$ BEGIN EXECUTE format('ALTER DATABASE %I SET synchronous_commit = on', current_database()); END $$`)
	rep, err := table.Run(context.Background(), options(from, to, &fakeDecrypter{}))
	require.NoError(t, err)
	require.EqualValues(t, 2000, rep.Rows)
	pgtest.Crash(t)
	pgtest.Start(t)
	require.Equal(t, "2000 2000", query(t, to, `SELECT (SELECT count(*) FROM clear_msgs), (SELECT sum(rows_done)::bigint FROM clear_msgs_progress)`))
}
