package pgtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/pgtest"
)

func TestNewDBGivesSeparateEmptyDatabases(t *testing.T) {
	a := pgtest.NewDB(t)
	b := pgtest.NewDB(t)
	require.NotEqual(t, a, b)
	ctx := context.Background()

	ca, err := pgx.Connect(ctx, a)
	require.NoError(t, err)
	defer ca.Close(ctx)
	_, err = ca.Exec(ctx, "CREATE TABLE only_in_a (x int)")
	require.NoError(t, err)

	cb, err := pgx.Connect(ctx, b)
	require.NoError(t, err)
	defer cb.Close(ctx)
	var n int
	require.NoError(t, cb.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n))
	require.Zero(t, n, "a table created in one test database shows in another")

	var version int
	require.NoError(t, cb.QueryRow(ctx, "SELECT current_setting('server_version_num')::int").Scan(&version))
	require.GreaterOrEqual(t, version, 110000, "the dump SQL targets PostgreSQL 11 and later")
}

func TestClusterRemovedWhenTestProcessDies(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "1" {
		// Child: start the cluster, report where it lives, then die without cleanup.
		dsn := pgtest.NewDB(t)
		conn, err := pgx.Connect(context.Background(), dsn)
		require.NoError(t, err)
		var dir string
		require.NoError(t, conn.QueryRow(context.Background(), "SHOW data_directory").Scan(&dir))
		fmt.Printf("DATADIR=%s\n", dir)
		os.Exit(3) // like a crash: no t.Cleanup, no deferred function runs
	}
	pgtest.NewDB(t) // skips or fails like the others when PostgreSQL is absent

	cmd := exec.Command(os.Args[0], "-test.run", "^TestClusterRemovedWhenTestProcessDies$", "-test.count=1")
	cmd.Env = append(os.Environ(), "PGTEST_CHILD=1")
	out, _ := cmd.Output()
	var dataDir string
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "DATADIR="); ok {
			dataDir = strings.TrimSpace(v)
		}
	}
	require.NotEmpty(t, dataDir, "child output: %s", out)
	require.Eventually(t, func() bool {
		_, err := os.Stat(dataDir)
		return os.IsNotExist(err)
	}, 30*time.Second, 100*time.Millisecond, "cluster directory %s still there after its test process died", dataDir)
}

// TestMissingPostgreSQLSkipsOrFails runs a test of this package in a child process that finds
// no PostgreSQL: a plain run skips with a message, IDVAULT_REQUIRE_EXTERNAL=1 makes it fail.
func TestMissingPostgreSQLSkipsOrFails(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") != "" {
		t.Skip("child run")
	}
	for _, tc := range []struct {
		require string
		want    string
		fails   bool
	}{
		{"0", "--- SKIP: TestNewDBGivesSeparateEmptyDatabases", false},
		{"1", "--- FAIL: TestNewDBGivesSeparateEmptyDatabases", true},
	} {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestNewDBGivesSeparateEmptyDatabases$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), "IDVAULT_PG_BIN="+t.TempDir(), "IDVAULT_REQUIRE_EXTERNAL="+tc.require, "PGTEST_CHILD=missing")
		out, err := cmd.CombinedOutput()
		require.Equal(t, tc.fails, err != nil, "%s", out)
		require.Contains(t, string(out), tc.want)
		require.Contains(t, string(out), "initdb, postgres) not found")
	}
}
