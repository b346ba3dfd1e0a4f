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
)

// listFlag is a repeatable string flag (--field A --field B).
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func exitRecordsCommand() *command {
	return &command{
		name:    "decrypt-records",
		summary: "decrypt ciphertext columns of CSV or JSON lines records through an exit server",
		help: `Reads records (CSV with a header row, RFC 4180, or one JSON object per line), replaces each
--field holding a ciphertext's text by its clear value, and writes every record in input order
with everything else unchanged. Empty and null fields pass through. A field that does not
decrypt keeps its ciphertext and gets one JSON line in --errors (or on standard error):
{"record", "field", "code", "message"}. "-" reads standard input or writes standard output;
a file output is written under a temporary name and renamed once complete. Exit status: 0 when
every field decrypted, 1 when some failed (every record is still written) or the run stopped, 2
for a usage error.`,
		setup: func(c *cmdline) runFunc {
			server := addExitServerFlags(c.FlagSet)
			in := c.String("in", "", "records to read: a `FILE`, or - for standard input")
			out := c.String("out", "", "records to write: a `FILE`, or - for standard output")
			var fields listFlag
			c.Var(&fields, "field", "column or top-level key `NAME` holding ciphertexts (repeat for several)")
			format := c.String("format", "", "record `FORMAT`: csv or jsonl (default: from --in's extension; required with -)")
			encoding := c.String("encoding", exitclient.EncodingBase64, "the ciphertexts' text `FORM`: base64 (standard or URL-safe, padded or not) or hex")
			clearEnc := c.String("clear-encoding", exitclient.EncodingText, "the clear values' `FORM`: text (must be UTF-8), base64 or hex")
			errorsFile := c.String("errors", "", "write failed fields as JSON lines to `FILE` (default, or -: standard error)")
			jobs := c.Int("jobs", 4, "`N` batches in flight at once")
			var ageTo listFlag
			c.Var(&ageTo, "age-recipient", "encrypt each clear value with age to recipient `R` (repeatable) and write the base64 of the age file")
			ageFile := c.String("age-recipients-file", "", "age recipients, one per line, from `FILE` (as --age-recipient)")
			c.require("in", "out", "field")
			c.nonEmpty(exitNonEmpty("in", "out", "field", "format", "encoding", "clear-encoding", "errors", "age-recipient", "age-recipients-file")...)
			return func(ctx context.Context, args []string) int {
				p := c.p
				if len(args) > 0 {
					return c.usageError("unexpected argument %q", args[0])
				}
				f := *format
				if f == "" {
					f = recordFormatOf(*in)
				}
				if f == "" {
					return c.usageError("--format csv or jsonl is needed: %q has no .csv or .jsonl extension", *in)
				}
				if *jobs < 1 {
					return c.usageError("--jobs must be at least 1")
				}
				if st, err := os.Lstat(*out); *out != "-" && err == nil && !st.Mode().IsRegular() {
					return c.usageError("--out %q exists and is not a regular file (a directory, a symlink, a device): name a file, or - for standard output", *out)
				}
				if *in != "-" && *out != "-" && sameFile(*in, *out) {
					return c.usageError("--in and --out name the same file")
				}
				// --errors is truncated when the run starts: on --in it would destroy the records
				// before they are read, on --out the output would replace the failures.
				for _, other := range []struct{ flag, name string }{{"--in", *in}, {"--out", *out}} {
					if *errorsFile != "" && *errorsFile != "-" && other.name != "-" && samePath(*errorsFile, other.name) {
						return c.usageError("--errors and %s name the same file", other.flag)
					}
				}
				opts := exitclient.RecordOptions{Format: f, Fields: fields, Encoding: *encoding, ClearEncoding: *clearEnc, Jobs: *jobs}
				if len(ageTo) > 0 || *ageFile != "" {
					recipients, err := exitclient.AgeRecipients(ageTo, *ageFile)
					if err != nil {
						return c.usageError("%s", printable(err.Error()))
					}
					clearSet := false
					c.Visit(func(fl *flag.Flag) { clearSet = clearSet || fl.Name == "clear-encoding" })
					if clearSet && *clearEnc != exitclient.EncodingBase64 {
						return c.usageError("with age, each field is written as the base64 of its age file: --clear-encoding can only be base64")
					}
					opts.Seal, opts.ClearEncoding = exitclient.AgeSeal(recipients), exitclient.EncodingBase64
				}
				return p.decryptRecords(ctx, server.client(p), *in, *out, *errorsFile, opts)
			}
		},
	}
}

// recordFormatOf guesses the record format from a file name.
func recordFormatOf(name string) string {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv":
		return exitclient.FormatCSV
	case ".jsonl", ".ndjson":
		return exitclient.FormatJSONL
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

// decryptRecords runs exitclient.DecryptRecords between the files (or standard streams) and
// reports.
func (p *prog) decryptRecords(ctx context.Context, c *exitclient.Client, in, out, errorsFile string, opts exitclient.RecordOptions) int {
	const cmd = "exit decrypt-records"
	const name = "idvault " + cmd
	// The server, its token and its database are checked before anything is read or written.
	if err := c.Probe(ctx); err != nil {
		return clientStopped(ctx, p, cmd, err, "nothing written", nil)
	}
	var r io.Reader = p.env.Stdin
	inputUnchanged := func() error { return nil }
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			fmt.Fprintf(p.stderr, "%s: %s\n", name, printable(err.Error()))
			return exitUsage // a bad path, as exit decrypt reports one
		}
		defer f.Close()
		r = f
		inputUnchanged = unchangedSince(f, in)
	}
	if r == nil {
		r = strings.NewReader("")
	}
	errw := p.stderr
	closeErrors := func() error { return nil }
	if errorsFile != "" && errorsFile != "-" { // "-" is a standard stream, as for --in and --out
		f, err := os.OpenFile(errorsFile, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err != nil {
			fmt.Fprintf(p.stderr, "%s: %v\n", name, err)
			return exitFail
		}
		defer f.Close()
		bw := bufio.NewWriter(f)
		errw = bw
		// The last failures sit in bw until the end: a full disk then loses them, and the run
		// must say so rather than leave a short --errors beside a summary that counts them.
		closeErrors = func() error {
			err := bw.Flush()
			if err == nil {
				err = f.Sync()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return fmt.Errorf("write errors: %w", err)
			}
			return nil
		}
	}
	enc := json.NewEncoder(errw)
	enc.SetEscapeHTML(false)
	opts.Errors = func(fe exitclient.FieldError) error { return enc.Encode(fe) }

	pr := newProgress(p.stderr, "decrypting records", 0)
	opts.Progress = func(n int64) { pr.Update("decrypting records", n, 0) }
	var rep exitclient.RecordsReport
	whole := false // every record read was written
	run := func(w io.Writer) error {
		var err error
		rep, err = c.DecryptRecords(ctx, r, w, opts)
		whole = err == nil
		if err == nil {
			err = inputUnchanged()
		}
		// Before the output is renamed into place: a run is complete with its failures listed.
		if cerr := closeErrors(); err == nil {
			err = cerr
		}
		return err
	}
	var err error
	if out == "-" {
		err = run(p.stdout)
	} else {
		// The safe writer of exit decrypt: a new part file (0600, no symlink followed), synced,
		// renamed over the final name only once complete.
		var tree *exitclient.OutputTree
		if tree, err = exitclient.OpenOutputTree(filepath.Dir(out)); err == nil {
			err = tree.Write(filepath.Base(out), run)
			if err == nil {
				err = tree.Sync() // the output's name survives a power loss before the summary
			}
			tree.Close()
		}
	}
	summary := fmt.Sprintf("%d records: %d fields decrypted, %d empty or null, %d failed",
		rep.Records, rep.Decrypted, rep.Empty, rep.Failed)
	if errors.Is(err, exitclient.ErrNoRecord) {
		// As exit import on a file that holds no identity: exit 1, nothing written.
		pr.Fail()
		src := "standard input"
		if in != "-" {
			src = strconv.Quote(in)
		}
		fmt.Fprintf(p.stderr, "%s: %s holds no record (it is empty, or holds only blank lines): nothing written\n", name, printable(src))
		return exitFail
	}
	if err != nil {
		pr.Fail()
		written := "no output file written"
		switch {
		case out == "-" && whole:
			written = "every record read was written to standard output"
		case out == "-":
			written = "the output is cut short"
		}
		return clientStopped(ctx, p, cmd, err, summary+"; "+written, nil)
	}
	pr.Done(summary)
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
