package pgtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/pgtest"
)

// Stop makes the databases unreachable; Start brings them back, data kept, same DSN.
// Not parallel: it stops the cluster every test of this package uses.
func TestStopAndStart(t *testing.T) {
	dsn := pgtest.NewDB(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)")
	require.NoError(t, err)
	conn.Close(ctx)

	pgtest.Stop(t)
	_, err = pgx.Connect(ctx, dsn)
	require.Error(t, err, "the database is down")

	pgtest.Start(t)
	conn, err = pgx.Connect(ctx, dsn)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var v int
	require.NoError(t, conn.QueryRow(ctx, "SELECT v FROM kept").Scan(&v))
	require.Equal(t, 42, v)
}
