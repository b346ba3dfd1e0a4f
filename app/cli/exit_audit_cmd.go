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
	"github.com/idvault/idvault/app/exitclient/audit"
	"github.com/idvault/idvault/app/exitclient/records"
)

// exitAuditCommand is `idvault exit audit`: which ciphertexts the imported identities open, and
// whose identities would open the others, read from the ciphertexts' headers alone.
func exitAuditCommand() *command {
	return &command{
		name:    "audit",
		summary: "say which ciphertexts the imported identities open, and who holds the others, without decrypting",
		help:    exitAuditHelp,
		setup:   exitAuditSetup,
	}
}

// exitAuditHelp is the help of exit audit, under its usage line.
const exitAuditHelp = `Reads only the header of each ciphertext (its format and resource or session ID) from a tree of
files (--in DIR) or from the --field columns of records (--in FILE, or - for standard input with
--format; CSV or JSON lines, as for decrypt-records), asks the exit server which keys the
imported identities reach, and prints a summary (total, reachable, missing, invalid) and the
identities whose import would open the missing ones, most first: users, and provisional
identities (an email or phone number a key was shared with) that no user claimed. A user is
named by the base64 of its hashed user ID, a provisional identity by the hash its public
identity carries (hashed_email:<base64> or hashed_phone_number:<base64>).

--users FILE names them by the plain user IDs the app gave createIdentity, one per line; a line
email:ADDRESS names the email provisional identity of ADDRESS (a phone number's hash is salted
with its private identity's key: only --identities names it). --identities FILE, the private
identities one would import (as exit import reads them), names each holder found there by its
line in FILE, and a provisional one also by its email or phone number; nothing else of an
identity is kept or printed.

--json prints one object: {"summary", "missing_by_user", "items"}, items listing every item that
is not reachable with its holders, each {"user_id", "user", "line"} or {"provisional", "user",
"line"} (user and line when known). Exit status: 0 when every item is reachable, 1 when some
are missing or invalid (or the audit stopped), 2 for a usage or configuration error.`

// auditFlags are the flags of exit audit.
type auditFlags struct {
	server                                   exitServerFlags
	in, format, encoding, key, users, idFile *string
	fields                                   listFlag
	asJSON                                   *bool
}

// exitAuditSetup declares the flags of exit audit and returns its run function.
func exitAuditSetup(c *cmdline) runFunc {
	f := &auditFlags{server: addExitServerFlags(c.FlagSet)}
	f.in = c.String("in", "", "a `DIR` of ciphertext files (read recursively), a FILE of records, or - for records on standard input")
	c.Var(&f.fields, "field", "column or top-level key `NAME` holding ciphertexts, for records (repeat for several)")
	f.format = c.String("format", "", "record `FORMAT`: csv or jsonl (default: from --in's extension; required with -)")
	f.encoding = c.String("encoding", records.EncodingBase64, "the ciphertexts' text `FORM` in records: base64 or hex")
	f.key = c.String("key", "", "column or top-level key `NAME` of records whose value each --json item carries as \"key\" (a primary key)")
	f.users = c.String("users", "", "`FILE` of plain app user IDs, and email:ADDRESS lines, one per line, to name the holders")
	f.idFile = c.String("identities", "", "`FILE` of the private identities one would import, to name the holders by their line")
	f.asJSON = c.Bool("json", false, "print one JSON object on standard output")
	c.require("in")
	c.nonEmpty(exitNonEmpty("in", "field", "format", "encoding", "users", "identities", "key")...)
	return func(ctx context.Context, args []string) int {
		if len(args) > 0 {
			return c.usageError("unexpected argument %q", args[0])
		}
		return f.run(ctx, c)
	}
}

// run opens --in and --identities, then audits them (prog.audit).
func (f *auditFlags) run(ctx context.Context, c *cmdline) int {
	p := c.p
	input, err := openAuditInput(p, *f.in)
	if err != nil {
		return c.usageError("--in: %v", err)
	}
	defer input.close()
	isDir := input.isDir
	opts, code, ok := f.options(c, isDir)
	if !ok {
		return code
	}
	if *f.idFile != "" {
		idf, err := os.Open(*f.idFile)
		if err != nil {
			return c.usageError("--identities: %v", err)
		}
		defer idf.Close()
		opts.Identities = idf
	}
	cl := f.server.client(p)
	run := func(ctx context.Context, opts audit.Options) (audit.Report, error) {
		if isDir {
			return audit.Tree(ctx, cl, *f.in, opts)
		}
		rep, err := audit.Records(ctx, cl, input.records, opts)
		if err == nil {
			err = input.unchanged() // a file cut short or grown: the counts are of neither version
		}
		return rep, err
	}
	return p.audit(ctx, cl, run, opts, *f.asJSON, *f.idFile)
}

// options checks the flags that depend on what --in is (records need --field and a format, a
// directory takes neither --field nor --key), reads --users, and returns the audit's options;
// on a usage error it returns the exit code.
func (f *auditFlags) options(c *cmdline, isDir bool) (audit.Options, int, bool) {
	opts := audit.Options{Fields: f.fields, Encoding: *f.encoding, Key: *f.key}
	if !isDir {
		opts.Format = *f.format
		if opts.Format == "" {
			opts.Format = recordFormatOf(*f.in)
		}
		if opts.Format == "" || len(f.fields) == 0 {
			return opts, c.usageError("a file of records needs --field and --format csv or jsonl (or a .csv or .jsonl name)"), false
		}
	} else if len(f.fields) > 0 || *f.key != "" {
		return opts, c.usageError("--field and --key are for records: --in names a directory"), false
	}
	if *f.users != "" {
		var err error
		if opts.Users, err = readUserIDs(*f.users); err != nil {
			return opts, c.usageError("--users: %v", err), false
		}
	}
	return opts, exitOK, true
}

// auditInput is --in of exit audit, opened and examined once: the records to read, or a
// directory to walk.
type auditInput struct {
	records   io.Reader
	isDir     bool
	unchanged func() error // reports a records file that changed since it was opened
	close     func()
}

// openAuditInput opens --in: "-" is standard input, records only.
func openAuditInput(p *prog, in string) (auditInput, error) {
	a := auditInput{unchanged: func() error { return nil }, close: func() {}}
	if in == "-" {
		a.records = p.env.Stdin
		if a.records == nil {
			a.records = strings.NewReader("")
		}
		return a, nil
	}
	f, err := os.Open(in)
	if err != nil {
		return a, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return a, err
	}
	a.close = func() { f.Close() }
	a.isDir = st.IsDir()
	if !a.isDir {
		a.records, a.unchanged = f, unchangedSince(f, in)
	}
	return a, nil
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
// identities is the --identities file, which the text report names.
func (p *prog) audit(ctx context.Context, c *exitclient.Client, run func(context.Context, audit.Options) (audit.Report, error), opts audit.Options, asJSON bool, identities string) int {
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
	var invalid []audit.Item
	opts.Item = func(it audit.Item) error {
		if it.Status == audit.Invalid && len(invalid) < 10 {
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
		err = writeAuditText(p.stdout, rep, invalid, identities)
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
func writeAuditJSON(w io.Writer, rep audit.Report, items *os.File) error {
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

// writeAuditText writes the summary and the top holders for a person: the identities to
// import, users and provisional identities.
func writeAuditText(w io.Writer, rep audit.Report, invalid []audit.Item, identities string) error {
	s := rep.Summary
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "total %d: reachable %d, missing %d, invalid %d\n", s.Total, s.Reachable, s.Missing, s.Invalid)
	if len(rep.MissingByUser) > 0 {
		fmt.Fprintln(bw, "\nimporting these identities (users' and provisional identities') would open missing items (a resource held by several counts for each):")
		unnamed := false
		for i, u := range rep.MissingByUser {
			if i == topHolders {
				fmt.Fprintf(bw, "  ... and %d more identities (--json lists every item with its holders)\n", len(rep.MissingByUser)-topHolders)
				break
			}
			fmt.Fprintf(bw, "  %s would open %d more\n", holderText(u, identities), u.Resources)
			unnamed = unnamed || (u.Provisional != "" && u.User == "")
		}
		if unnamed && identities == "" {
			fmt.Fprintln(bw, "  (a provisional identity is named by the hash its public identity carries: --identities FILE,\n  the identities you would import, names each by its line and email or phone number)")
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

// holderText names a holder for a person: "NAME (user ID ID)" or the ID alone for a user,
// "provisional identity NAME (HASH)" or the hash alone for a provisional identity, with its
// line in the identities file when it is there.
func holderText(u audit.UserCount, identities string) string {
	id, kind, prefix := u.UserID, "user ID ", ""
	if u.Provisional != "" {
		id, kind, prefix = u.Provisional, "", "provisional identity "
	}
	var notes []string
	if u.User != "" {
		notes = append(notes, kind+id)
	}
	if u.Line > 0 {
		notes = append(notes, fmt.Sprintf("line %d of %s", u.Line, printable(identities)))
	}
	name := id
	if u.User != "" {
		name = printable(u.User)
	}
	if len(notes) == 0 {
		return prefix + name
	}
	return prefix + name + " (" + strings.Join(notes, ", ") + ")"
}

// strconvQuoteIfNeeded prints a source as is when it is printable, quoted otherwise.
func strconvQuoteIfNeeded(s string) string {
	if p := printable(s); p != s || strings.ContainsAny(s, " \t") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
