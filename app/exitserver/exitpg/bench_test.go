package exitpg_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// psql runs SQL on the dump's database.
func psql(b *testing.B, dsn, sql string) string {
	b.Helper()
	out, err := exec.Command(pgtest.Bin(b, "psql"), "-X", "-q", "-t", "-A", "-v", "ON_ERROR_STOP=1", "-d", dsn, "-c", sql).CombinedOutput()
	if err != nil {
		b.Fatalf("psql: %v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

// BenchmarkImport10kUsers: identities imported per second through PUT /v1/identities (the
// bulk client, batches of 500) into a dump of 10 000 users; the exit_* tables are emptied
// before each iteration. Goal: at least 3 000 identities/s.
func BenchmarkImport10kUsers(b *testing.B) {
	l := exitpgtest.LoadBench(b, exitpgtest.BenchDump(b, gen.Options{Users: 10_000, Groups: 10, Resources: 10, Seed: 1}))
	in := exitpgtest.Serve(b, l, 0)
	ids := exitpgtest.Identities(b, l.Dir)
	var rates []float64
	for b.Loop() {
		b.StopTimer()
		tables := psql(b, l.DSN, `SELECT string_agg(quote_ident(tablename), ', ') FROM pg_tables WHERE tablename LIKE 'exit\_%'`)
		if tables != "" {
			psql(b, l.DSN, "TRUNCATE "+tables)
		}
		b.StartTimer()
		start := time.Now()
		sum, err := in.Client.Import(context.Background(), ids, exitclient.ImportOptions{Batch: 500})
		if err != nil {
			b.Fatal(err)
		}
		if sum.Imported != len(ids) {
			b.Fatalf("imported %d of %d (already %d, refused %d)", sum.Imported, len(ids), sum.AlreadyImported, len(sum.Refused))
		}
		rates = append(rates, float64(len(ids))/time.Since(start).Seconds())
	}
	b.ReportMetric(float64(len(ids)), "identities")
	b.ReportMetric(apptest.Median(rates), "identities/s")
	b.ReportMetric(100*apptest.Median(rates)/3000, "pct_of_goal(3000/s)")
}
