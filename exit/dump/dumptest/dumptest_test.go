package dumptest_test

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/dump/gen"
)

func TestSharedDumpLoads(t *testing.T) {
	d := dumptest.Shared(t)
	require.Len(t, d.App.ID, 32)
	require.Len(t, d.App.DecoyIDs, 2)
	require.Equal(t, d.Summary.Resources+d.Summary.Negatives, len(d.Manifest))
	require.Equal(t, d.Summary.Identities, len(d.Identities))
	_, err := os.Stat(d.File(d.Manifest[0]))
	require.NoError(t, err)

	dsn := d.Load(t)
	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	var users int
	require.NoError(t, conn.QueryRow(context.Background(), "SELECT count(*) FROM users WHERE trustchain_id = $1", d.App.ID).Scan(&users))
	require.Equal(t, dumptest.Small.Users, users)
	require.Same(t, d, dumptest.Shared(t), "generated once per test binary")

	other := dumptest.New(t, gen.Options{Users: 3, Resources: 4, Seed: 1})
	require.NotEqual(t, d.App.ID, other.App.ID)
}

func TestMain(m *testing.M) { dumptest.Main(m) }
