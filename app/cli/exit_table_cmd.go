package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/exit/table"
)

// exitTableCommand is `idvault exit decrypt-table`: the ciphertext columns of a PostgreSQL
// table decrypted into another table, resumably, over several exit servers.
func exitTableCommand() *command {
	return &command{
		name:    "decrypt-table",
		summary: "decrypt ciphertext columns of a PostgreSQL table into another table (resumable, over several exit servers)",
		help:    exitTableHelp,
		setup:   exitTableSetup,
	}
}

// exitTableHelp is the help of exit decrypt-table, under its usage line.
const exitTableHelp = `Reads the source table (--table, or --query) by --key order, sends each --field's ciphertexts
to the exit servers (--url, repeatable: batches go to each in turn, and a server that fails is
left aside while the others serve), and writes every row into --to-table with COPY (binary): the
same columns and types, each --field as --clear-type. Each batch commits with its progress
(<to-table>_progress) and its failures (<to-table>_errors: key, field, code, message), so a rerun
of the same command continues where a stopped one (Ctrl-C, SIGKILL, every server gone) left off,
and every row is written once. A field that does not decrypt is NULL in --to-table; NULL and
empty values stay as they are. Connection strings may leave the password to PGPASSWORD or
~/.pgpass. Exit status: 0 when every field decrypted, 1 when some failed or the run stopped
(rerun to continue), 2 for a usage or configuration error (found before anything is written),
130 when interrupted.`

// tableFlags are the flags of exit decrypt-table.
type tableFlags struct {
	urls, fields, ageTo                                                     listFlag
	token, from, to, src, query, key, toTable, clearType, encoding, ageFile *string
	budget                                                                  *retryBudgetFlag
	workers, batchRows                                                      *int
	restart, count, asJSON                                                  *bool
}

// exitTableSetup declares the flags of exit decrypt-table and returns its run function.
func exitTableSetup(c *cmdline) runFunc {
	f := &tableFlags{}
	c.Var(&f.urls, "url", "base `URL` of an exit server (repeat for several; default http://127.0.0.1:8000)")
	f.token = c.String("token", "", "bearer `TOKEN` of the exit servers (or IDVAULT_EXIT__TOKEN)")
	f.budget = new(retryBudgetFlag(exitclient.DefaultMaxOutage))
	c.Var(f.budget, "retry-budget", "for how long (`DURATION`) the run keeps retrying while no request to any server succeeds, then stops")
	f.from = c.String("from", "", "the source database: PostgreSQL connection string `DSN` (the app's database, not the dump's)")
	f.to = c.String("to", "", "the destination database `DSN` (default: --from)")
	f.src = c.String("table", "", "the source table `NAME` (or SCHEMA.NAME)")
	f.query = c.String("query", "", "the source as a `SELECT` instead of --table")
	f.key = c.String("key", "", "the source's unique, NOT NULL, orderable `COLUMN` (integer, text, uuid)")
	c.Var(&f.fields, "field", "ciphertext column `NAME`: text (base64 or hex, see --encoding) or bytea (raw); repeat for several")
	f.toTable = c.String("to-table", "", "the destination table `NAME` (or SCHEMA.NAME), created when absent")
	f.clearType = c.String("clear-type", "bytea", "the clear columns' `TYPE`: bytea, or text (refuses clear bytes that are not UTF-8 as not_text)")
	f.encoding = c.String("encoding", records.EncodingBase64, "the text ciphertexts' `FORM`: base64 (standard or URL-safe, padded or not) or hex")
	f.workers = c.Int("workers", 0, "`N` key ranges read, decrypted and written at once (default: one per --url)")
	f.batchRows = c.Int("batch-rows", table.DefaultBatchRows, "rows per batch (`N`), each committed with its progress")
	c.Var(&f.ageTo, "age-recipient", "encrypt each clear value with age to recipient `R` (repeatable): the clear columns then hold age files (bytea)")
	f.ageFile = c.String("age-recipients-file", "", "age recipients, one per line, from `FILE` (as --age-recipient)")
	f.restart = c.Bool("restart", false, "drop the progress of an earlier run on --to-table, with the rows it wrote, and start over")
	f.count = c.Bool("count", false, "count the source's rows exactly for the progress (count(*)) rather than taking the planner's estimate")
	f.asJSON = c.Bool("json", false, "print the summary as one JSON object on standard output")
	c.require("from", "key", "field", "to-table")
	c.nonEmpty("url", "token", "from", "to", "table", "query", "key", "field", "to-table", "clear-type", "encoding", "age-recipient", "age-recipients-file")
	return func(ctx context.Context, args []string) int {
		if len(args) > 0 {
			return c.usageError("unexpected argument %q", args[0])
		}
		if code, ok := f.check(c); !ok {
			return code
		}
		if len(f.urls) == 0 {
			f.urls = listFlag{"http://127.0.0.1:8000"}
		}
		opts := f.options()
		if code, ok := f.seal(c, &opts); !ok {
			return code
		}
		pool := exitclient.NewPool(f.urls, cmp.Or(*f.token, c.p.getenv("IDVAULT_EXIT__TOKEN")), time.Duration(*f.budget))
		return c.p.decryptTable(ctx, pool, opts, *f.asJSON)
	}
}

// check refuses flags that do not go together or out of range; on a usage error it returns
// the exit code.
func (f *tableFlags) check(c *cmdline) (int, bool) {
	if (*f.src == "") == (*f.query == "") {
		return c.usageError("give the source as --table or as --query, one of the two"), false
	}
	if *f.clearType != "bytea" && *f.clearType != "text" {
		return c.usageError("--clear-type is bytea or text, not %q", *f.clearType), false
	}
	if _, err := records.DecodeCiphertext(*f.encoding, nil); err != nil {
		return c.usageError("%s", printable(err.Error())), false
	}
	if *f.batchRows < 1 || *f.workers < 0 {
		return c.usageError("--batch-rows must be at least 1, --workers at least 1"), false
	}
	return exitOK, true
}

// options are the options of exit/table the flags give, without age (seal); Command records
// the flags a rerun must repeat.
func (f *tableFlags) options() table.Options {
	enc := *f.encoding
	return table.Options{
		From: *f.from, To: cmp.Or(*f.to, *f.from), Table: *f.src, Query: *f.query, Key: *f.key, Fields: f.fields,
		ToTable: *f.toTable, ClearText: *f.clearType == "text", Workers: cmp.Or(*f.workers, len(f.urls)), BatchRows: *f.batchRows,
		Restart: *f.restart, Count: *f.count,
		Decode:  func(dst, text []byte) ([]byte, error) { return records.AppendCiphertext(dst, enc, text) },
		Command: "encoding=" + enc,
	}
}

// seal sets opts to seal the clear values with age, when the age flags are given; on a usage
// error it returns the exit code.
func (f *tableFlags) seal(c *cmdline, opts *table.Options) (int, bool) {
	if len(f.ageTo) == 0 && *f.ageFile == "" {
		return exitOK, true
	}
	if opts.ClearText {
		return c.usageError("with age, the clear columns hold age files: --clear-type can only be bytea"), false
	}
	recipients, err := outfiles.AgeRecipients(f.ageTo, *f.ageFile)
	if err != nil {
		return c.usageError("%s", printable(err.Error())), false
	}
	opts.Seal = outfiles.AgeSeal(recipients)
	// A rerun must seal to the same recipients: the rows it adds open with the same keys.
	opts.Command += " age=" + strings.Join(f.ageTo, ",") + " age-file=" + *f.ageFile
	return exitOK, true
}

// exit decrypt-table's soft memory limit: a base that holds a lone worker's batches (read,
// decrypted, written, a few MiB each) and the buffers exit/table recycles, and a little more
// for each worker (one of several holds two batches). Much lower, the collector runs all the
// time; the peak RSS of BenchmarkDecryptTable is the figure to watch when changing them.
const (
	tableMemoryBase      = 36 << 20
	tableMemoryPerWorker = 6 << 20
)

// poolDecrypter is the exit servers' pool as exit/table asks for it.
type poolDecrypter struct{ pool *exitclient.Pool }

func (d poolDecrypter) Decrypt(ctx context.Context, cts [][]byte, each func(int, table.Result)) error {
	return d.pool.DecryptEach(ctx, cts, func(i int, r exitclient.BatchResult) {
		each(i, table.Result{Clear: r.Clear, Code: r.Code, Message: r.Message})
	})
}

// tableSummary is the --json summary of exit decrypt-table.
type tableSummary struct {
	table.Report
	Status  string  `json:"status"` // ok, failed (some fields), stopped, interrupted
	Errors  string  `json:"errors_table"`
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// decryptTable probes the servers, runs exit/table and reports.
func (p *prog) decryptTable(ctx context.Context, pool *exitclient.Pool, opts table.Options, asJSON bool) int {
	const cmd = "exit decrypt-table"
	start := time.Now()
	// The servers, their token and their database are checked before anything is written.
	if err := pool.Probe(ctx); err != nil {
		return clientStopped(ctx, p, cmd, err, "nothing written", nil)
	}
	opts.Decrypter = poolDecrypter{pool}
	// A soft memory limit (unless GOMEMLIMIT sets one): the garbage collector returns the
	// batches' buffers before the heap doubles, so memory stays flat and small.
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(tableMemoryBase + int64(opts.Workers)*tableMemoryPerWorker)
	}
	opts.Warn = func(s string) { fmt.Fprintf(p.stderr, "idvault %s: warning: %s\n", cmd, s) }
	pr := newProgress(p.stderr, "decrypting rows", 0)
	opts.Progress = func(pg table.Progress) {
		stage := "decrypting rows"
		if pg.Failed > 0 {
			stage = fmt.Sprintf("decrypting rows, %d fields failed,", pg.Failed)
		}
		pr.updateKeepBar(stage, pg.Done, pg.Total)
	}
	rep, err := table.Run(ctx, opts)
	errorsTable := opts.ToTable + "_errors"
	sum := tableSummary{Report: rep, Errors: errorsTable, Seconds: time.Since(start).Seconds()}
	line := fmt.Sprintf("%d rows in %s (%d this run): %d fields decrypted, %d empty or null, %d failed",
		rep.Rows, opts.ToTable, rep.ThisRun, rep.Decrypted, rep.Empty, rep.Failed)
	if rep.Failed > 0 {
		line += " (listed in " + errorsTable + ")"
	}
	code := exitOK
	switch {
	case err != nil && errors.As(err, new(*table.ConfigError)):
		pr.Fail()
		fmt.Fprintf(p.stderr, "idvault %s: %s\n", cmd, printable(err.Error()))
		return exitUsage
	case err != nil:
		pr.Fail()
		code = clientStopped(ctx, p, cmd, err, line+"; rerun the same command to continue", nil)
		sum.Status, sum.Error = "stopped", err.Error()
		if code == exitInterrupted {
			sum.Status, sum.Error = "interrupted", ""
		}
		if code == exitUsage {
			return code
		}
	case rep.Failed > 0:
		pr.Done(line)
		code, sum.Status = exitFail, "failed"
	default:
		pr.Done(line)
		sum.Status = "ok"
	}
	if asJSON {
		enc := json.NewEncoder(p.stdout)
		_ = enc.Encode(sum)
	}
	return code
}

// updateKeepBar is Update whose stage may change without starting a new bar (the stage
// carries the failures so far).
func (pr *progress) updateKeepBar(stage string, done, total int64) {
	pr.mu.Lock()
	pr.stage = stage
	pr.mu.Unlock()
	pr.Update(stage, done, total)
}
