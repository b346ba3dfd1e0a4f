package dump_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// BenchmarkLoadCheck measures what checking every statement before running anything costs
// load-dump: the check pass alone (MB/s of SQL read), and a whole Load (the check pass, then
// the load) into a new database of the test PostgreSQL, on a dump of 2,000 users and 6,000
// resources.
func BenchmarkLoadCheck(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "dump")
	if _, err := gen.Generate(context.Background(), dir, gen.Options{Users: 2000, Groups: 200, Resources: 6000, Seed: 1}); err != nil {
		b.Fatal(err)
	}
	files, err := dump.DumpFiles(dir)
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, f := range files {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			b.Fatal(err)
		}
		size += st.Size()
	}
	var check, load time.Duration
	for b.Loop() {
		start := time.Now()
		for _, f := range files {
			if err := dump.CheckFile(context.Background(), filepath.Join(dir, f), f, nil); err != nil {
				b.Fatal(err)
			}
		}
		check += time.Since(start)
		dsn := pgtest.NewDB(b)
		start = time.Now()
		if _, err := dump.Load(context.Background(), dsn, dir, nil); err != nil {
			b.Fatal(err)
		}
		load += time.Since(start)
	}
	n := float64(b.N)
	b.ReportMetric(float64(size)/(1<<20), "dump-MiB")
	b.ReportMetric(float64(size)/(1<<20)/(check.Seconds()/n), "check-MiB/s")
	b.ReportMetric(check.Seconds()/n, "s/check")
	b.ReportMetric(load.Seconds()/n, "s/load")
	b.ReportMetric(check.Seconds()/load.Seconds(), "check-fraction-of-load")
}
