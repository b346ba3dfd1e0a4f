package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/idvault/idvault/app/exitclient"
)

func exitAuditCommand() *command {
	return &command{
		name:    "audit",
		summary: "say which ciphertexts the imported identities open, and who holds the others, without decrypting",
		help: `Reads only the header of each ciphertext (its format and resource or session ID) from a tree of
files (--in DIR) or from the --field columns of records (--in FILE, CSV or JSON lines, as for
decrypt-records), asks the exit server which keys the imported identities reach, and prints a
summary (total, reachable, missing, invalid) and the users whose identity would open the missing
ones, most first. --users names them by the plain user IDs the app gave createIdentity (one per
line). --json prints one object: {"summary", "missing_by_user", "items"}, items listing every
item that is not reachable. Exit status: 0 when every item is reachable, 1 when some are missing
or invalid (or the audit stopped), 2 for a usage or configuration error.`,
		setup: func(c *cmdline) runFunc {
			server := addExitServerFlags(c.FlagSet)
			in := c.String("in", "", "a `DIR` of ciphertext files (read recursively), or a FILE of records")
			var fields listFlag
			c.Var(&fields, "field", "column or top-level key `NAME` holding ciphertexts, for records (repeat for several)")
			format := c.String("format", "", "record `FORMAT`: csv or jsonl (default: from --in's extension)")
			encoding := c.String("encoding", exitclient.EncodingBase64, "the ciphertexts' text `FORM` in records: base64 or hex")
			key := c.String("key", "", "column or top-level key `NAME` of records whose value each --json item carries as \"key\" (a primary key)")
			users := c.String("users", "", "`FILE` of plain app user IDs, one per line, to name the holders")
			asJSON := c.Bool("json", false, "print one JSON object on standard output")
			c.require("in")
			c.nonEmpty(exitNonEmpty("in", "field", "format", "encoding", "users", "key")...)
			return func(ctx context.Context, args []string) int {
				p := c.p
				if len(args) > 0 {
					return c.usageError("unexpected argument %q", args[0])
				}
				// --in is opened and examined once: the audit reads the records from f, or
				// walks the directory.
				f, err := os.Open(*in)
				if err != nil {
					return c.usageError("--in: %v", err)
				}
				defer f.Close()
				st, err := f.Stat()
				if err != nil {
					return c.usageError("--in: %v", err)
				}
				opts := exitclient.AuditOptions{Fields: fields, Encoding: *encoding, Key: *key}
				if !st.IsDir() {
					opts.Format = *format
					if opts.Format == "" {
						opts.Format = recordFormatOf(*in)
					}
					if opts.Format == "" || len(fields) == 0 {
						return c.usageError("a file of records needs --field and --format csv or jsonl (or a .csv or .jsonl name)")
					}
				} else if len(fields) > 0 || *key != "" {
					return c.usageError("--field and --key are for records: --in names a directory")
				}
				if *users != "" {
					if opts.Users, err = readUserIDs(*users); err != nil {
						return c.usageError("--users: %v", err)
					}
				}
				cl := server.client(p)
				unchanged := unchangedSince(f, *in)
				run := func(ctx context.Context, opts exitclient.AuditOptions) (exitclient.AuditReport, error) {
					if st.IsDir() {
						return cl.AuditTree(ctx, *in, opts)
					}
					rep, err := cl.AuditRecords(ctx, f, opts)
					if err == nil {
						err = unchanged() // a file cut short or grown: the counts are of neither version
					}
					return rep, err
				}
				return p.audit(ctx, cl, run, opts, *asJSON)
			}
		},
	}
}

// readUserIDs reads one user ID per line, skipping blank lines.
func readUserIDs(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for first := true; sc.Scan(); first = false {
		id := strings.TrimRight(sc.Text(), "\r")
		if first {
			id = strings.TrimPrefix(id, "\ufeff") // a UTF-8 BOM, else the first ID never matches
		}
		if strings.TrimSpace(id) != "" {
			ids = append(ids, id)
		}
	}
	return ids, sc.Err()
}

// topHolders is how many holders the text report lists.
const topHolders = 20

// audit probes the server with c, then runs the audit with opts and prints its report.
func (p *prog) audit(ctx context.Context, c *exitclient.Client, run func(context.Context, exitclient.AuditOptions) (exitclient.AuditReport, error), opts exitclient.AuditOptions, asJSON bool) int {
	const cmd = "exit audit"
	if err := c.Probe(ctx); err != nil {
		return clientStopped(ctx, p, cmd, err, "nothing audited", nil)
	}
	// Items go to a temporary file of JSON lines while the audit runs, so that memory stays
	// flat whatever their number, and the summary can come first in the JSON output.
	tmp, err := os.CreateTemp("", "idvault-audit-*.jsonl")
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault %s: %v\n", cmd, err)
		return exitFail
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	items := bufio.NewWriterSize(tmp, 256<<10)
	enc := json.NewEncoder(items)
	enc.SetEscapeHTML(false)
	var invalid []exitclient.AuditItem
	opts.Item = func(it exitclient.AuditItem) error {
		if it.Status == exitclient.AuditInvalid && len(invalid) < 10 {
			invalid = append(invalid, it)
		}
		return enc.Encode(it)
	}
	pr := newProgress(p.stderr, "auditing", 0)
	opts.Progress = func(n int64) { pr.Update("auditing", n, 0) }
	rep, err := run(ctx, opts)
	if err == nil {
		err = items.Flush()
	}
	s := rep.Summary
	summary := fmt.Sprintf("%d items: %d reachable, %d missing, %d invalid", s.Total, s.Reachable, s.Missing, s.Invalid)
	if err != nil {
		pr.Fail()
		return clientStopped(ctx, p, cmd, err, summary+" so far", nil)
	}
	pr.Done(summary)
	if asJSON {
		err = writeAuditJSON(p.stdout, rep, tmp)
	} else {
		err = writeAuditText(p.stdout, rep, invalid)
	}
	if err != nil {
		fmt.Fprintf(p.stderr, "idvault %s: write the report: %v\n", cmd, err)
		return exitFail
	}
	if s.Missing+s.Invalid > 0 {
		return exitFail
	}
	return exitOK
}

// writeAuditJSON writes {"summary", "missing_by_user", "items"} with the items from the
// temporary file of JSON lines.
func writeAuditJSON(w io.Writer, rep exitclient.AuditReport, items *os.File) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	head, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	bw.Write(head[:len(head)-1]) // without its closing brace
	bw.WriteString(`,"items":[`)
	if _, err := items.Seek(0, io.SeekStart); err != nil {
		return err
	}
	br := bufio.NewReaderSize(items, 256<<10)
	for first := true; ; first = false {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if !first {
				bw.WriteByte(',')
			}
			bw.Write(line[:len(line)-1])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
	}
	bw.WriteString("]}\n")
	return bw.Flush()
}

// writeAuditText writes the summary and the top holders for a person.
func writeAuditText(w io.Writer, rep exitclient.AuditReport, invalid []exitclient.AuditItem) error {
	s := rep.Summary
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "total %d: reachable %d, missing %d, invalid %d\n", s.Total, s.Reachable, s.Missing, s.Invalid)
	if len(rep.MissingByUser) > 0 {
		fmt.Fprintln(bw, "\nimporting these users' identities would open missing items (a resource held by several users counts for each):")
		for i, u := range rep.MissingByUser {
			if i == topHolders {
				fmt.Fprintf(bw, "  ... and %d more users (--json lists every item with its holders)\n", len(rep.MissingByUser)-topHolders)
				break
			}
			name := u.UserID
			if u.User != "" {
				name = fmt.Sprintf("%s (user ID %s)", printable(u.User), u.UserID)
			}
			fmt.Fprintf(bw, "  %s would open %d more\n", name, u.Resources)
		}
	}
	if len(invalid) > 0 {
		fmt.Fprintln(bw, "\nnot Tanker ciphertexts (first ones):")
		for _, it := range invalid {
			fmt.Fprintf(bw, "  %s: %s\n", strconvQuoteIfNeeded(it.Source), it.Reason)
		}
	}
	return bw.Flush()
}

// strconvQuoteIfNeeded prints a source as is when it is printable, quoted otherwise.
func strconvQuoteIfNeeded(s string) string {
	if p := printable(s); p != s || strings.ContainsAny(s, " \t") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
