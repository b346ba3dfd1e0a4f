package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/idvault/idvault/app/exitclient"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/app/exitclient/records"
)

// listFlag is a repeatable string flag (--field A --field B).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// exitRecordsCommand is `idvault exit decrypt-records`: the ciphertext fields of CSV or JSON
// lines records replaced by their clear values, every record written in input order.
func exitRecordsCommand() *command {
	return &command{
		name:    "decrypt-records",
		summary: "decrypt ciphertext columns of CSV or JSON lines records through an exit server",
		help:    exitRecordsHelp,
		setup:   exitRecordsSetup,
	}
}

// exitRecordsHelp is the help of exit decrypt-records, under its usage line.
const exitRecordsHelp = `Reads records (CSV with a header row, RFC 4180, or one JSON object per line), replaces each
--field holding a ciphertext's text by its clear value, and writes every record in input order
with everything else unchanged. Empty and null fields pass through. A field that does not
decrypt keeps its ciphertext and gets one JSON line in --errors (or on standard error):
{"record", "key" (with --key), "field", "code", "message"}. "-" reads standard input or writes
standard output; a file output, and --errors, are written under a temporary name (a new file,
0600, no symlink followed) and renamed once complete. When the run stops (the server gone,
Ctrl-C, SIGTERM, a write error), standard output ends on a whole record, then one line that
holds no clear byte and that a loader fails on (an unterminated CSV quote, not JSON), so that
psql's \copy ... FROM STDIN loads nothing. Exit status: 0 when every field decrypted, 1 when
some failed (every record is still written) or the run stopped, 2 for a usage error.`

// recordsFlags are the flags of exit decrypt-records.
type recordsFlags struct {
	server                                                        exitServerFlags
	in, out, format, encoding, clearEnc, errorsFile, key, ageFile *string
	fields, ageTo                                                 listFlag
	jobs                                                          *int
}

// exitRecordsSetup declares the flags of exit decrypt-records and returns its run function.
func exitRecordsSetup(c *cmdline) runFunc {
	f := &recordsFlags{server: addExitServerFlags(c.FlagSet)}
	f.in = c.String("in", "", "records to read: a `FILE`, or - for standard input")
	f.out = c.String("out", "", "records to write: a `FILE`, or - for standard output")
	c.Var(&f.fields, "field", "column or top-level key `NAME` holding ciphertexts (repeat for several)")
	f.format = c.String("format", "", "record `FORMAT`: csv or jsonl (default: from --in's extension; required with -)")
	f.encoding = c.String("encoding", records.EncodingBase64, "the ciphertexts' text `FORM`: base64 (standard or URL-safe, padded or not) or hex")
	f.clearEnc = c.String("clear-encoding", records.EncodingText, "the clear values' `FORM`: text (must be UTF-8), base64 or hex")
	f.errorsFile = c.String("errors", "", "write failed fields as JSON lines to `FILE` (default, or -: standard error)")
	f.key = c.String("key", "", "column or top-level key `NAME` whose value each --errors line carries as \"key\" (a primary key)")
	f.jobs = c.Int("jobs", 4, "`N` batches in flight at once")
	c.Var(&f.ageTo, "age-recipient", "encrypt each clear value with age to recipient `R` (repeatable) and write the base64 of the age file")
	f.ageFile = c.String("age-recipients-file", "", "age recipients, one per line, from `FILE` (as --age-recipient)")
	c.require("in", "out", "field")
	c.nonEmpty(exitNonEmpty("in", "out", "field", "format", "encoding", "clear-encoding", "errors", "key", "age-recipient", "age-recipients-file")...)
	return func(ctx context.Context, args []string) int {
		p := c.p
		if len(args) > 0 {
			return c.usageError("unexpected argument %q", args[0])
		}
		opts, code, ok := f.options(c)
		if !ok {
			return code
		}
		return p.decryptRecords(ctx, f.server.client(p), *f.in, *f.out, *f.errorsFile, opts)
	}
}

// options checks the flags (checkFiles for the files they name) and returns the options of
// records.Decrypt; on a usage error it returns the exit code.
func (f *recordsFlags) options(c *cmdline) (records.Options, int, bool) {
	format := *f.format
	if format == "" {
		format = recordFormatOf(*f.in)
	}
	if format == "" {
		return records.Options{}, c.usageError("--format csv or jsonl is needed: %q has no .csv or .jsonl extension", *f.in), false
	}
	if *f.jobs < 1 {
		return records.Options{}, c.usageError("--jobs must be at least 1"), false
	}
	if code, ok := f.checkFiles(c); !ok {
		return records.Options{}, code, false
	}
	opts := records.Options{Format: format, Fields: f.fields, Encoding: *f.encoding, ClearEncoding: *f.clearEnc, Jobs: *f.jobs, Key: *f.key}
	if len(f.ageTo) > 0 || *f.ageFile != "" {
		recipients, err := outfiles.AgeRecipients(f.ageTo, *f.ageFile)
		if err != nil {
			return opts, c.usageError("%s", printable(err.Error())), false
		}
		clearSet := false
		c.Visit(func(fl *flag.Flag) { clearSet = clearSet || fl.Name == "clear-encoding" })
		if clearSet && *f.clearEnc != records.EncodingBase64 {
			return opts, c.usageError("with age, each field is written as the base64 of its age file: --clear-encoding can only be base64"), false
		}
		opts.Seal, opts.ClearEncoding = outfiles.AgeSeal(recipients), records.EncodingBase64
	}
	return opts, exitOK, true
}

// checkFiles refuses an --out or --errors that is not a regular file, and files named twice;
// on a usage error it returns the exit code.
func (f *recordsFlags) checkFiles(c *cmdline) (int, bool) {
	in, out, errorsFile := *f.in, *f.out, *f.errorsFile
	if st, err := os.Lstat(out); out != "-" && err == nil && !st.Mode().IsRegular() {
		return c.usageError("--out %q exists and is not a regular file (a directory, a symlink, a device): name a file, or - for standard output", out), false
	}
	if st, err := os.Lstat(errorsFile); errorsFile != "-" && err == nil && !st.Mode().IsRegular() {
		return c.usageError("--errors %q exists and is not a regular file (a directory, a symlink, a device): it is not followed nor replaced; name a file, or - for standard error", errorsFile), false
	}
	if in != "-" && out != "-" && sameFile(in, out) {
		return c.usageError("--in and --out name the same file"), false
	}
	// --errors on --in would replace the records once the run ends, on --out the output
	// would replace the failures.
	for _, other := range []struct{ flag, name string }{{"--in", in}, {"--out", out}} {
		if errorsFile != "" && errorsFile != "-" && other.name != "-" && samePath(errorsFile, other.name) {
			return c.usageError("--errors and %s name the same file", other.flag), false
		}
	}
	return exitOK, true
}

// recordFormatOf guesses the record format from a file name.
func recordFormatOf(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv":
		return records.FormatCSV
	case ".jsonl", ".ndjson":
		return records.FormatJSONL
	}
	return ""
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// samePath reports whether a and b name the same file, existing (sameFile) or to be created
// (the same absolute path).
func samePath(a, b string) bool {
	if sameFile(a, b) {
		return true
	}
	absA, err1 := filepath.Abs(a)
	absB, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && absA == absB
}

// decryptRecords runs records.Decrypt between the files (or standard streams) and
// reports.
func (p *prog) decryptRecords(ctx context.Context, c *exitclient.Client, in, out, errorsFile string, opts records.Options) int {
	r := &recordsRun{p: p, c: c, in: in, out: out, errorsFile: errorsFile, opts: opts}
	if out == "-" {
		// Standard output read as it comes (psql \copy ... FROM STDIN) ends, on any stop, with
		// the stop line a loader fails on (records.StopWriter).
		r.stdout = records.NewStopWriter(p.stdout, opts.Format)
	}
	// The server, its token and its database are checked before anything is read or written.
	if err := c.Probe(ctx); err != nil {
		nothing := "nothing written"
		if r.stdout != nil {
			nothing = "nothing written but the stop line"
		}
		return r.stop(clientStopped(ctx, p, recordsCmd, err, nothing, nil))
	}
	closeIn, err := r.openInput()
	if err != nil {
		fmt.Fprintf(p.stderr, "%s: %s\n", recordsName, printable(err.Error()))
		return r.stop(exitUsage) // a bad path, as exit decrypt reports one
	}
	defer closeIn()
	r.pr = newProgress(p.stderr, "decrypting records", 0)
	r.opts.Progress = func(n int64) { r.pr.Update("decrypting records", n, 0) }
	if errorsFile != "" && errorsFile != "-" { // "-" is a standard stream, as for --in and --out
		if r.errorsTree, err = outfiles.OpenTree(filepath.Dir(errorsFile)); err != nil {
			fmt.Fprintf(p.stderr, "%s: --errors: %s\n", recordsName, printable(err.Error()))
			return r.stop(exitFail)
		}
		defer r.errorsTree.Close()
	}
	return r.report(ctx, r.write(ctx))
}

const (
	recordsCmd  = "exit decrypt-records"
	recordsName = "idvault " + recordsCmd
)

// recordsRun is one run of exit decrypt-records.
type recordsRun struct {
	p                   *prog
	c                   *exitclient.Client
	in, out, errorsFile string
	opts                records.Options
	stdout              *records.StopWriter // --out -
	input               io.Reader
	inputUnchanged      func() error
	errorsTree          *outfiles.Tree // the directory of --errors FILE
	pr                  *progress
	rep                 records.Report
	whole               bool // every record read was written
}

// stop ends standard output with the stop line (when it is the output), and returns code.
func (r *recordsRun) stop(code int) int {
	if r.stdout != nil {
		reason := "an error, named on its standard error"
		if code == exitInterrupted {
			reason = "interrupted"
		}
		_ = r.stdout.Stop(reason) // a standard output that fails is why the run stopped
	}
	return code
}

// openInput opens --in (standard input for -), and returns how to close it.
func (r *recordsRun) openInput() (func(), error) {
	r.inputUnchanged = func() error { return nil }
	if r.in == "-" {
		r.input = r.p.env.Stdin
		if r.input == nil {
			r.input = strings.NewReader("")
		}
		return func() {}, nil
	}
	f, err := os.Open(r.in)
	if err != nil {
		return nil, err
	}
	r.input, r.inputUnchanged = f, unchangedSince(f, r.in)
	return func() { f.Close() }, nil
}

// decrypt runs records.Decrypt from the input to w.
func (r *recordsRun) decrypt(ctx context.Context, w io.Writer) error {
	var err error
	r.rep, err = records.Decrypt(ctx, r.c, r.input, w, r.opts)
	r.whole = err == nil
	if err == nil {
		err = r.inputUnchanged()
	}
	return err
}

// withErrors is decrypt with the failures going as JSON lines to --errors, written as --out
// is: a new part file (0600, no symlink followed) renamed into place once the run is
// complete, before --out is; or to standard error.
func (r *recordsRun) withErrors(ctx context.Context, w io.Writer) error {
	if r.errorsTree == nil {
		enc := json.NewEncoder(r.p.stderr)
		enc.SetEscapeHTML(false)
		r.opts.Errors = func(fe records.FieldError) error { return enc.Encode(fe) }
		return r.decrypt(ctx, w)
	}
	return r.errorsTree.Write(filepath.Base(r.errorsFile), func(ew io.Writer) error {
		bw := bufio.NewWriterSize(ew, 64<<10)
		enc := json.NewEncoder(bw)
		enc.SetEscapeHTML(false)
		r.opts.Errors = func(fe records.FieldError) error { return enc.Encode(fe) }
		err := r.decrypt(ctx, w)
		// The last failures sit in bw until here: a full disk then loses them, and the run
		// must say so rather than leave a short --errors beside a summary that counts them.
		if ferr := bw.Flush(); err == nil && ferr != nil {
			err = fmt.Errorf("write errors: %w", ferr)
		}
		return err
	})
}

// write decrypts to --out: standard output, or the safe writer of exit decrypt (a new part
// file, 0600, no symlink followed, synced, renamed over the final name only once complete).
func (r *recordsRun) write(ctx context.Context) error {
	run := func(w io.Writer) error { return r.withErrors(ctx, w) }
	var err error
	if r.out == "-" {
		err = run(r.stdout)
	} else {
		var tree *outfiles.Tree
		if tree, err = outfiles.OpenTree(filepath.Dir(r.out)); err == nil {
			err = tree.Write(filepath.Base(r.out), run)
			if err == nil {
				err = tree.Sync() // the output's name survives a power loss before the summary
			}
			tree.Close()
		}
	}
	if err == nil && r.errorsTree != nil {
		err = r.errorsTree.Sync()
	}
	return err
}

// report says how the run ended (err: what write returned) and returns the exit code.
func (r *recordsRun) report(ctx context.Context, err error) int {
	p, rep := r.p, r.rep
	summary := fmt.Sprintf("%d records: %d fields decrypted, %d empty or null, %d failed",
		rep.Records, rep.Decrypted, rep.Empty, rep.Failed)
	var unsafe *outfiles.UnsafeOutputError
	switch {
	case errors.Is(err, records.ErrNoRecord):
		// As exit import on a file that holds no identity: exit 1, nothing written.
		r.pr.Fail()
		src := "standard input"
		if r.in != "-" {
			src = strconv.Quote(r.in)
		}
		fmt.Fprintf(p.stderr, "%s: %s holds no record (it is empty, or holds only blank lines): nothing written\n", recordsName, printable(src))
		return exitFail
	case errors.As(err, &unsafe):
		// Something planted at --out's or --errors' name (or their part files'): refused
		// before any record is read.
		r.pr.Fail()
		fmt.Fprintf(p.stderr, "%s: %s\n", recordsName, printable(unsafe.Error()))
		return r.stop(exitUsage)
	case err != nil:
		r.pr.Fail()
		written := "no output file written"
		switch {
		case r.out == "-" && r.whole:
			written = "every record read was written to standard output, then the stop line"
		case r.out == "-":
			written = "standard output ends on a whole record, then the stop line"
		}
		if r.errorsTree != nil {
			written += "; --errors left as it was"
		}
		return r.stop(clientStopped(ctx, p, recordsCmd, err, summary+"; "+written, nil))
	}
	r.pr.Done(summary)
	if rep.Failed > 0 {
		return exitFail
	}
	return exitOK
}

// unchangedSince returns a check that f, the records file named name, is as it was when opened:
// a file cut short or appended to while it was read (an export still running, a copy still
// being made) would give an output that looks complete and is not.
func unchangedSince(f *os.File, name string) func() error {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return func() error { return nil } // a pipe or a device: nothing to compare
	}
	return func() error {
		now, err := f.Stat()
		if err == nil && now.Size() == st.Size() && now.ModTime().Equal(st.ModTime()) {
			return nil
		}
		size := "?"
		if err == nil {
			size = strconv.FormatInt(now.Size(), 10)
		}
		return fmt.Errorf("read records %q (%d bytes when opened, %s now): %w", name, st.Size(), size, exitclient.ErrInputChanged)
	}
}
