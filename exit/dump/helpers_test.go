package dump_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"idvault/app/identity"
	"idvault/exit/dump"
)

// smallOptions make a dump that exercises every case in about a second.
func smallOptions() dump.Options {
	return dump.Options{Users: 24, Groups: 9, Resources: 90, DecoyApps: 2, Big: 1, Seed: 7, WriteKeys: true}
}

var (
	sharedOnce sync.Once
	sharedDir  string
	sharedSum  dump.Summary
	sharedErr  error
)

// sharedDump generates the small dump once per test binary (tests only read it).
func sharedDump(t *testing.T) (string, dump.Summary) {
	t.Helper()
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "idvault-dump-test-")
		if err != nil {
			sharedErr = err
			return
		}
		sharedDir = filepath.Join(dir, "dump")
		sharedSum, sharedErr = dump.Generate(context.Background(), sharedDir, smallOptions())
	})
	require.NoError(t, sharedErr)
	return sharedDir, sharedSum
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedDir != "" {
		_ = os.RemoveAll(filepath.Dir(sharedDir))
	}
	os.Exit(code)
}

func readJSONL[T any](t *testing.T, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		require.NoError(t, json.Unmarshal(sc.Bytes(), &v), "line %q", sc.Text())
		out = append(out, v)
	}
	require.NoError(t, sc.Err())
	return out
}

func b64(t *testing.T, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	return b
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
