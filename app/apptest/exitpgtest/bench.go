package exitpgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// BenchDump returns a generated dump directory, made once and kept in the temp directory for
// later runs (generation is deterministic; a dump of 10 000 users takes a while to make).
func BenchDump(b *testing.B, opts gen.Options) string {
	b.Helper()
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("idvault-bench-dump-u%d-r%d-s%d", opts.Users, opts.Resources, opts.Seed))
	if _, err := os.Stat(filepath.Join(dir, dump.ManifestFile)); err == nil {
		return dir
	}
	tmp := dir + ".tmp"
	_ = os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	if _, err := gen.Generate(ctx, tmp, opts); err != nil {
		b.Fatal(err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		b.Fatal(err)
	}
	return dir
}

// LoadBench loads the dump in dir (BenchDump) into a fresh database.
func LoadBench(b *testing.B, dir string) *Loaded {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	l := &Loaded{Dir: dir, DSN: pgtest.NewDB(b)}
	if _, err := dump.Load(ctx, l.DSN, dir, nil); err != nil {
		b.Fatal(err)
	}
	app, err := dump.ReadApp(dir)
	if err != nil {
		b.Fatal(err)
	}
	l.AppID = app.ID
	return l
}
