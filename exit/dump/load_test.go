package dump_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// TestSameSeedSameBytes generates the same dump with one and with two workers: every file
// must be byte-identical. Another seed must change the data.
func TestSameSeedSameBytes(t *testing.T) {
	ctx := context.Background()
	opts := dumptest.Small
	opts.Big = 0
	a, b, c := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b"), filepath.Join(t.TempDir(), "c")
	opts.Workers = 1
	_, err := gen.Generate(ctx, a, opts)
	require.NoError(t, err)
	opts.Workers = 2
	_, err = gen.Generate(ctx, b, opts)
	require.NoError(t, err)
	filesA, filesB := readTree(t, a), readTree(t, b)
	require.Equal(t, len(filesA), len(filesB))
	for name, content := range filesA {
		require.True(t, bytes.Equal(content, filesB[name]), "%s differs between two runs with the same seed", name)
	}
	require.Greater(t, len(filesA), 100)

	opts.Seed++
	_, err = gen.Generate(ctx, c, opts)
	require.NoError(t, err)
	filesC := readTree(t, c)
	require.False(t, bytes.Equal(filesA[dump.DataFile], filesC[dump.DataFile]), "another seed gives the same data")
	require.Equal(t, filesA[dump.SchemaFile], filesC[dump.SchemaFile])
}

func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = b
		return err
	}))
	return out
}

func TestGenerateRefusesADirectoryHoldingADump(t *testing.T) {
	dir := dumptest.Shared(t).Dir
	before, err := os.ReadFile(filepath.Join(dir, dump.DataFile))
	require.NoError(t, err)
	_, err = gen.Generate(context.Background(), dir, dumptest.Small)
	require.ErrorContains(t, err, "already holds a dump")
	after, err := os.ReadFile(filepath.Join(dir, dump.DataFile))
	require.NoError(t, err)
	require.Equal(t, before, after)
}

// copyDump copies the SQL files of the shared dump to a new directory.
func copyDump(t *testing.T) string {
	t.Helper()
	src := dumptest.Shared(t).Dir
	dst := t.TempDir()
	for _, f := range []string{dump.SchemaFile, dump.DataFile, dump.IndexesFile} {
		b, err := os.ReadFile(filepath.Join(src, f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dst, f), b, 0o644))
	}
	return dst
}

const deleteLine = "\x00delete"

// breakLine replaces (or deletes) line n (1-based) of a file.
func breakLine(t *testing.T, path string, n int, repl func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	if r := repl(lines[n-1]); r == deleteLine {
		lines = append(lines[:n-1], lines[n:]...)
	} else {
		lines[n-1] = r
	}
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644))
}

// lineOf returns the 1-based number of the first line with prefix, after line after.
func lineOf(t *testing.T, path, prefix string, after int) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	for i, l := range strings.Split(string(b), "\n") {
		if i+1 > after && strings.HasPrefix(l, prefix) {
			return i + 1
		}
	}
	t.Fatalf("no line starting with %q in %s", prefix, path)
	return 0
}

func TestLoadErrorNamesFileAndLine(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		file     string
		breakAt  func(t *testing.T, path string) int
		repl     func(string) string
		wantMsg  string
		loaded   []string // files committed before the failure
		wantRows bool     // data present after the failure
	}{
		{
			name: "bad bytea in a COPY row", file: dump.DataFile,
			breakAt: func(t *testing.T, p string) int { return lineOf(t, p, "COPY devices", 0) + 3 },
			repl:    func(l string) string { return strings.Replace(l, `\\x`, `\\xZZ`, 1) },
			wantMsg: "COPY devices row 3", loaded: []string{dump.SchemaFile},
		},
		{
			name: "missing column in a COPY row", file: dump.DataFile,
			breakAt: func(t *testing.T, p string) int { return lineOf(t, p, "COPY key_publishes", 0) + 5 },
			repl:    func(l string) string { return l[:strings.LastIndex(l, "\t")] },
			wantMsg: "missing data for column", loaded: []string{dump.SchemaFile},
		},
		{
			name: "statement PostgreSQL refuses", file: dump.IndexesFile,
			breakAt: func(t *testing.T, p string) int { return lineOf(t, p, "CREATE INDEX user_groups_enc", 0) },
			repl:    func(l string) string { return strings.Replace(l, "user_groups_enc", "user_groups_group", 1) },
			wantMsg: `relation "user_groups_group" already exists`, loaded: []string{dump.SchemaFile, dump.DataFile}, wantRows: true,
		},
		{
			name: "statement the loader refuses", file: dump.IndexesFile,
			breakAt: func(t *testing.T, p string) int { return lineOf(t, p, "CREATE INDEX user_groups_enc", 0) },
			repl:    func(l string) string { return strings.Replace(l, "ON", "ONN", 1) },
			wantMsg: "statement refused: CREATE INDEX must be", loaded: nil,
		},
		{
			name: "empty line in a COPY block", file: dump.DataFile,
			breakAt: func(t *testing.T, p string) int { return lineOf(t, p, "COPY users", 0) + 2 },
			repl:    func(string) string { return "" },
			wantMsg: `missing data for column "user_id"`, loaded: []string{dump.SchemaFile},
		},
		{
			name: "unterminated COPY", file: dump.DataFile,
			breakAt: func(t *testing.T, p string) int {
				return lineOf(t, p, `\.`, lineOf(t, p, "COPY tanker_provisional_keys", 0))
			},
			repl:    func(string) string { return deleteLine },
			wantMsg: `not ended by its closing line (\. alone)`, loaded: nil, // found before anything ran
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDump(t)
			path := filepath.Join(dir, tc.file)
			line := tc.breakAt(t, path)
			breakLine(t, path, line, tc.repl)
			dsn := pgtest.NewDB(t)
			sum, err := dump.Load(ctx, dsn, dir, nil)
			var le *dump.LoadError
			require.True(t, errors.As(err, &le), "error %v is no LoadError", err)
			require.Equal(t, tc.file, le.File)
			if tc.name == "unterminated COPY" {
				// Reported at the first data row of the COPY that runs to the end of file.
				require.Equal(t, lineOf(t, path, "COPY tanker_provisional_keys", 0)+1, le.Line, "%v", err)
			} else {
				require.Equal(t, line, le.Line, "error: %v", err)
			}
			require.Contains(t, err.Error(), tc.wantMsg)
			require.Contains(t, err.Error(), tc.file+" line ")
			require.Equal(t, tc.loaded, sum.Files)
			if tc.loaded == nil {
				require.Empty(t, userTables(t, connect(t, dsn)), "found before anything ran: the database is untouched")
				return
			}
			counts := tableCounts(t, connect(t, dsn))
			if tc.wantRows {
				require.Positive(t, counts["key_publishes"])
			} else {
				for tbl, n := range counts {
					require.Zero(t, n, "the failed file's transaction left rows in %s", tbl)
				}
			}
		})
	}
}

func TestLoadErrorNeverQuotesKeyMaterial(t *testing.T) {
	dir := copyDump(t)
	path := filepath.Join(dir, dump.DataFile)
	line := lineOf(t, path, "COPY tanker_provisional_keys", 0) + 1
	var secret string
	breakLine(t, path, line, func(l string) string {
		cols := strings.Split(l, "\t")
		secret = strings.TrimPrefix(cols[6], `\\x`) // tanker_private_signature_key
		cols[6] += "zz"                             // odd digit count: invalid
		return strings.Join(cols, "\t")
	})
	_, err := dump.Load(context.Background(), pgtest.NewDB(t), dir, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "column tanker_private_signature_key")
	require.NotContains(t, err.Error(), secret[:16], "the error quotes a private key")
}

// TestLoadTwiceFailsAndChangesNothing loads the dump, then loads it again: the second load
// fails on the first CREATE TABLE and the database is unchanged.
func TestLoadTwiceFailsAndChangesNothing(t *testing.T) {
	ctx := context.Background()
	d := dumptest.Shared(t)
	dir, dsn := d.Dir, d.Load(t)
	conn := connect(t, dsn)
	before := tableDigests(t, conn)

	sum, err := dump.Load(ctx, dsn, dir, nil)
	var le *dump.LoadError
	require.True(t, errors.As(err, &le), "second load: %v", err)
	require.Equal(t, dump.SchemaFile, le.File)
	require.Equal(t, lineOf(t, filepath.Join(dir, dump.SchemaFile), "CREATE TABLE trustchains", 0), le.Line)
	require.Contains(t, err.Error(), "already exists")
	require.Contains(t, err.Error(), "empty database")
	require.Empty(t, sum.Files)
	require.Equal(t, before, tableDigests(t, conn))
}

// TestPsqlLoadsTheSameDatabase runs the files with psql -v ON_ERROR_STOP=1, as the exit tool's
// guide shows, and compares every table with a load-dump of the same dump.
func TestPsqlLoadsTheSameDatabase(t *testing.T) {
	ctx := context.Background()
	dir := dumptest.Shared(t).Dir
	viaLoad := pgtest.NewDB(t)
	_, err := dump.Load(ctx, viaLoad, dir, nil)
	require.NoError(t, err)

	viaPsql := pgtest.NewDB(t)
	psql := pgtest.Bin(t, "psql")
	files, err := dump.DumpFiles(dir)
	require.NoError(t, err)
	for _, f := range files {
		out, err := exec.Command(psql, "-X", "-q", "-v", "ON_ERROR_STOP=1", viaPsql, "-f", filepath.Join(dir, f)).CombinedOutput()
		require.NoError(t, err, "psql %s: %s", f, out)
	}
	a, b := tableDigests(t, connect(t, viaLoad)), tableDigests(t, connect(t, viaPsql))
	require.Len(t, a, len(dumpTables))
	require.Equal(t, a, b)

	// The indexes exist too.
	var n int
	require.NoError(t, connect(t, viaLoad).QueryRow(ctx, "SELECT count(*) FROM pg_indexes WHERE indexname = 'key_publishes_resource'").Scan(&n))
	require.Equal(t, 1, n)
}

// TestKeyNotFoundCasesReachNoImportedIdentity checks, in the database, where the keys of the
// key_not_found cases are published: nowhere, only to the withheld provisional identity,
// or only in a decoy app.
func TestKeyNotFoundCasesReachNoImportedIdentity(t *testing.T) {
	ctx := context.Background()
	d := dumptest.Shared(t)
	dir, dsn := d.Dir, d.Load(t)
	conn := connect(t, dsn)
	app := readApp(t, dir)
	for _, e := range dumptest.Shared(t).Manifest {
		if e.Expected != dump.ExpectKeyNotFound {
			continue
		}
		lookups := lookupIDs(t, e)
		var inMain, nature13, elsewhere int
		require.NoError(t, conn.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE trustchain_id = $1),
			count(*) FILTER (WHERE trustchain_id = $1 AND nature = 13),
			count(*) FILTER (WHERE trustchain_id <> $1)
			FROM key_publishes WHERE resource_id = ANY($2)`, app.ID, lookups).Scan(&inMain, &nature13, &elsewhere))
		switch e.Case {
		case "key_published_to_nobody":
			require.Zero(t, inMain+elsewhere, e.File)
		case "key_only_for_withheld_provisional_identity":
			require.Equal(t, 1, inMain, e.File)
			require.Equal(t, 1, nature13, e.File)
		case "key_only_in_decoy_app":
			require.Zero(t, inMain, e.File)
			require.Equal(t, 1, elsewhere, e.File)
		default:
			t.Fatalf("unexpected key_not_found case %q", e.Case)
		}
	}
}

// TestDecoyAppsShadowMainResources checks that decoy apps hold key publishes under main
// resource IDs (so a reader ignoring trustchain_id would be caught) and that every ok
// resource has a nature 8 publish to its creator in the main app, but those of
// Options.ProvisionalOnly, whose one key publish goes to a provisional identity nobody claimed
// whose Tanker half the dump holds.
func TestDecoyAppsShadowMainResources(t *testing.T) {
	ctx := context.Background()
	d := dumptest.Shared(t)
	dir, dsn := d.Dir, d.Load(t)
	conn := connect(t, dsn)
	app := readApp(t, dir)
	shadowed, provOnly := 0, 0
	for _, e := range dumptest.Shared(t).Manifest {
		if e.Expected != dump.ExpectOK {
			continue
		}
		lookups := lookupIDs(t, e)
		if strings.HasPrefix(e.File, dump.DataDir+"/"+dump.ProvisionalOnlyName) {
			provOnly++
			var all, unclaimed int
			require.NoError(t, conn.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE k.nature = 13
				AND EXISTS (SELECT 1 FROM tanker_provisional_keys p WHERE p.trustchain_id = $1
					AND p.app_public_signature_key || p.tanker_public_signature_key = k.recipient)
				AND NOT EXISTS (SELECT 1 FROM provisional_identity_claims c WHERE c.trustchain_id = $1
					AND c.app_public_signature_key || c.tanker_public_signature_key = k.recipient))
				FROM key_publishes k WHERE k.trustchain_id = $1 AND k.resource_id = ANY($2)`, app.ID, lookups).Scan(&all, &unclaimed))
			require.Equal(t, []int{1, 1}, []int{all, unclaimed}, e.File)
			continue
		}
		var toCreator, decoy int
		require.NoError(t, conn.QueryRow(ctx, `SELECT
			count(*) FILTER (WHERE k.trustchain_id = $1 AND k.nature = 8 AND EXISTS (
				SELECT 1 FROM devices d JOIN users u ON u.trustchain_id = d.trustchain_id AND u.user_id = d.user_id
				WHERE d.trustchain_id = $1 AND d.user_public_encryption_key = k.recipient AND d.user_id = $3)),
			count(*) FILTER (WHERE k.trustchain_id <> $1)
			FROM key_publishes k WHERE k.resource_id = ANY($2)`,
			app.ID, lookups, hashUser(app.ID, e.Creator)).Scan(&toCreator, &decoy))
		require.Positive(t, toCreator, "%s: no nature 8 publish to its creator", e.File)
		if decoy > 0 {
			shadowed++
		}
	}
	require.Positive(t, shadowed, "no decoy key publish under a main resource ID")
	require.Equal(t, dumptest.Small.ProvisionalOnly, provOnly)
}

// A dump copied in part (2_data.sql missing) is refused before anything runs, rather than
// loaded without its rows.
func TestDumpFilesRefusesAGap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, name := range []string{"1_schema.sql", "3_indexes.sql", "notes.txt"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("-- empty\n"), 0o600))
	}
	_, err := dump.DumpFiles(dir)
	require.ErrorContains(t, err, "no file numbered 2")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "2_data.sql"), []byte("-- empty\n"), 0o600))
	files, err := dump.DumpFiles(dir)
	require.NoError(t, err)
	require.Equal(t, []string{"1_schema.sql", "2_data.sql", "3_indexes.sql"}, files)
}

// Ctrl-C (ctx ending) while 2_data.sql loads stops the load with a *LoadError naming that
// file and saying it was interrupted, not pgx's "use of closed network connection" (ctx
// ending mid-statement, seen at full scale) or "timeout: context already done" at some line; the schema stays loaded, the data file is rolled back.
func TestLoadInterruptedNamesTheFile(t *testing.T) {
	d := dumptest.Shared(t)
	dsn := pgtest.NewDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sum, err := dump.Load(ctx, dsn, d.Dir, func(file string, done, _ int64) {
		if file == dump.DataFile && done > 0 {
			cancel()
		}
	})
	require.ErrorIs(t, err, context.Canceled)
	var le *dump.LoadError
	require.True(t, errors.As(err, &le), "%v", err)
	require.Equal(t, dump.DataFile, le.File)
	require.Contains(t, err.Error(), "interrupted")
	require.NotContains(t, err.Error(), "closed network connection")
	require.NotContains(t, err.Error(), "timeout")
	require.Equal(t, []string{dump.SchemaFile}, sum.Files)
	var rows int
	require.NoError(t, connect(t, dsn).QueryRow(context.Background(), "SELECT count(*) FROM key_publishes").Scan(&rows))
	require.Zero(t, rows, "the interrupted file was rolled back")
}
