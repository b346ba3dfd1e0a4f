package dump_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/encryption"
)

func TestMain(m *testing.M) { dumptest.Main(m) }

// lookupIDs are the IDs a manifest entry's key may be published under, as the database holds them.
func lookupIDs(t *testing.T, e dump.ManifestEntry) [][]byte {
	t.Helper()
	rid, err := encryption.ParseResourceID(dumptest.Base64(t, e.ResourceID))
	require.NoError(t, err)
	var out [][]byte
	for _, id := range rid.Lookups() {
		out = append(out, id[:])
	}
	return out
}

// readApp reads the dump's app.json and checks that its secret is the app's.
func readApp(t *testing.T, dir string) dump.App {
	t.Helper()
	a, err := dump.ReadApp(dir)
	require.NoError(t, err)
	require.NoError(t, identity.CheckApp(a.ID, a.Secret))
	return a
}

func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

var dumpTables = []string{"trustchains", "users", "devices", "user_groups", "user_group_members",
	"user_group_provisional_members", "key_publishes", "provisional_identity_claims", "tanker_provisional_keys"}

// tableCounts returns the row count of every dump table.
func tableCounts(t *testing.T, conn *pgx.Conn) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tbl := range dumpTables {
		var n int
		require.NoError(t, conn.QueryRow(context.Background(), "SELECT count(*) FROM "+tbl).Scan(&n))
		out[tbl] = n
	}
	return out
}

// userTables lists the tables of the database's public schema.
func userTables(t *testing.T, conn *pgx.Conn) []string {
	t.Helper()
	rows, err := conn.Query(context.Background(), "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1")
	require.NoError(t, err)
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return names
}

// tableDigests returns an order-independent digest of every dump table's content.
func tableDigests(t *testing.T, conn *pgx.Conn) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tbl := range dumpTables {
		var d *string
		require.NoError(t, conn.QueryRow(context.Background(),
			"SELECT md5(string_agg(md5(x::text), '' ORDER BY md5(x::text))) FROM "+tbl+" x").Scan(&d))
		if d != nil {
			out[tbl] = *d
		}
	}
	return out
}

func hashUser(appID []byte, email string) []byte { return identity.HashUserID(appID, email) }
