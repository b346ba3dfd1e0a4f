package dump

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// LoadError is a failure while loading a dump: the file, the line (0 when not known) and
// the cause, PostgreSQL's message included. The file's transaction was rolled back; files
// before it stay loaded.
type LoadError struct {
	File string
	Line int
	Err  error
}

func (e *LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s line %d: %v", printable(e.File), e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", printable(e.File), e.Err)
}

// printable returns a file name as is, or quoted with escapes when it holds control or other
// non-printable characters (a name must not drive the terminal it is printed on).
func printable(name string) string {
	for _, r := range name {
		if !unicode.IsPrint(r) {
			return strconv.Quote(name)
		}
	}
	return name
}

func (e *LoadError) Unwrap() error { return e.Err }

// LoadSummary says what Load did.
type LoadSummary struct {
	Files      []string
	Statements int
	CopyRows   int64
}

var numberedSQL = regexp.MustCompile(`^(\d+)_.*\.sql$`)

// DumpFiles returns the numbered SQL files of a dump directory (N_name.sql) in the order
// of their number; a gap in the numbers is an error (a file missing).
func DumpFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("load dump: %w", err)
	}
	type f struct {
		n    int
		name string
	}
	var files []f
	for _, e := range entries {
		m := numberedSQL.FindStringSubmatch(e.Name())
		if m == nil || e.IsDir() {
			continue
		}
		n, err := strconv.Atoi(m[1])
		if err != nil {
			continue
		}
		files = append(files, f{n, e.Name()})
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("load dump: no numbered SQL files (1_schema.sql, ...) in %s", dir)
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].n != files[j].n {
			return files[i].n < files[j].n
		}
		return files[i].name < files[j].name
	})
	out := make([]string, len(files))
	for i, x := range files {
		if i > 0 && x.n > files[i-1].n+1 {
			// A file lost on the way (a dump copied in part) would load without error, and
			// the exit server would then answer key_not_found for everything it held.
			return nil, fmt.Errorf("load dump: %s follows %s with no file numbered %d between them in %s: is a file of the dump missing?",
				x.name, files[i-1].name, files[i-1].n+1, dir)
		}
		out[i] = x.name
	}
	return out, nil
}

// Load runs the numbered SQL files of dir in order against the database at dsn, each file
// in one transaction, its COPY ... FROM stdin blocks through the COPY protocol. It gives
// the result of `psql -v ON_ERROR_STOP=1 -f FILE` for each file in order. progress, when
// set, is called with the bytes of the current file read so far.
//
// A dump comes from outside: before connecting, Load reads every file and checks every
// statement with CheckStatement; the first one that is not part of an exit dump stops it
// with a *LoadError naming the file and line (wrapping a *RefusedError), and nothing is run.
// While loading, each statement is checked again (a file changed in between is refused at
// that statement) and sent alone through the extended protocol, which runs one statement
// only.
//
// A file that fails is rolled back and stops the load with a *LoadError naming the file,
// the line and PostgreSQL's message; ctx ending while a file loads gives a *LoadError naming
// the file and wrapping ctx's error. Loading into a database that already holds the dump
// fails on the first CREATE TABLE, so it changes nothing.
func Load(ctx context.Context, dsn, dir string, progress func(file string, done, total int64)) (LoadSummary, error) {
	var sum LoadSummary
	files, err := DumpFiles(dir)
	if err != nil {
		return sum, err
	}
	for _, name := range files {
		if err := checkFile(ctx, filepath.Join(dir, name), name, progress); err != nil {
			return sum, err
		}
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return sum, fmt.Errorf("load dump: connect: %w", err)
	}
	defer conn.Close(context.Background())
	for _, name := range files {
		if err := loadFile(ctx, conn.PgConn(), filepath.Join(dir, name), name, &sum, progress); err != nil {
			if cerr := ctx.Err(); cerr != nil {
				// pgx ends a statement whose context ends by closing the connection ("use of
				// closed network connection"), and refuses the next one as a "timeout": say
				// why the load stopped instead.
				err = &LoadError{File: name, Err: fmt.Errorf("interrupted (the file is rolled back): %w", cerr)}
			}
			return sum, err
		}
		sum.Files = append(sum.Files, name)
	}
	return sum, nil
}

// checkFile reads a whole file and checks each of its statements; COPY data is skipped.
func checkFile(ctx context.Context, path, name string, progress func(string, int64, int64)) error {
	f, cr, err := openCounting(path, name)
	if err != nil {
		return err
	}
	defer f.Close()
	stage := "checking " + name
	p := NewParser(cr)
	for n := 0; ; n++ {
		it, perr := p.Next()
		if perr == io.EOF {
			break
		}
		if perr != nil {
			return parseLoadError(name, p, perr)
		}
		if err := checkItem(name, it, true); err != nil {
			return err
		}
		if it.Copy != nil {
			if _, err := io.Copy(io.Discard, it.Copy); err != nil {
				return parseLoadError(name, p, err)
			}
		}
		if n%64 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if progress != nil {
			progress(stage, cr.n, cr.size)
		}
	}
	return nil
}

// checkItem checks a statement and that the splitter and the checker agree on whether COPY
// data follows it.
func checkItem(name string, it Item, beforeRun bool) error {
	stmt, err := CheckStatement(it.SQL)
	var re *RefusedError
	if errors.As(err, &re) {
		re.BeforeRun = beforeRun
		return &LoadError{File: name, Line: it.Line, Err: re}
	}
	if (stmt.Kind == StmtCopy) != (it.Copy != nil) {
		return &LoadError{File: name, Line: it.Line, Err: &RefusedError{Reason: "COPY FROM stdin written in a way the loader does not split", BeforeRun: beforeRun}}
	}
	return nil
}

func loadFile(ctx context.Context, pc *pgconn.PgConn, path, name string, sum *LoadSummary, progress func(string, int64, int64)) (err error) {
	f, cr, err := openCounting(path, name)
	if err != nil {
		return err
	}
	defer f.Close()
	report := func() {
		if progress != nil {
			progress(name, cr.n, cr.size)
		}
	}
	report()
	if _, err := pc.Exec(ctx, "BEGIN").ReadAll(); err != nil {
		return &LoadError{File: name, Err: err}
	}
	defer func() {
		if err != nil {
			// Roll back on a fresh context: ctx may be the reason we stop.
			_, _ = pc.Exec(context.Background(), "ROLLBACK").ReadAll()
		}
	}()
	p := NewParser(cr)
	for {
		it, perr := p.Next()
		if perr == io.EOF {
			break
		}
		if perr != nil {
			return parseLoadError(name, p, perr)
		}
		if err := checkItem(name, it, false); err != nil {
			return err
		}
		if it.Copy != nil {
			tag, cerr := pc.CopyFrom(ctx, it.Copy, it.SQL)
			if cerr != nil {
				if c, ok := it.Copy.(*copyReader); ok && c.err != nil {
					return &LoadError{File: name, Line: c.err.Line, Err: errors.New(c.err.Msg)}
				}
				return pgLoadError(name, it, cerr)
			}
			sum.CopyRows += tag.RowsAffected()
		} else if xerr := pc.ExecParams(ctx, it.SQL, nil, nil, nil, nil).Read().Err; xerr != nil {
			// The extended protocol runs exactly one statement: a second one hidden from the
			// checker would be refused by the server.
			return pgLoadError(name, it, xerr)
		}
		sum.Statements++
		report()
	}
	if _, err := pc.Exec(ctx, "COMMIT").ReadAll(); err != nil {
		return &LoadError{File: name, Err: err}
	}
	report()
	return nil
}

func parseLoadError(name string, p *Parser, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return &LoadError{File: name, Line: pe.Line, Err: errors.New(pe.Msg)}
	}
	return &LoadError{File: name, Line: p.Line(), Err: err}
}

// copyWhere matches the start of PostgreSQL's context for a COPY error, leaving out the
// column value it quotes (it may be key material).
var copyWhere = regexp.MustCompile(`^COPY (\S+), line (\d+)(?:, column ([^:]+))?`)

// pgLoadError turns a server error into a LoadError at the line of the statement (or of the
// COPY row) that failed.
func pgLoadError(name string, it Item, err error) error {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return &LoadError{File: name, Line: it.Line, Err: err}
	}
	line := it.Line
	msg := fmt.Sprintf("%s: %s (SQLSTATE %s)", pg.Severity, pg.Message, pg.Code)
	if m := copyWhere.FindStringSubmatch(pg.Where); m != nil && it.Copy != nil {
		n, _ := strconv.Atoi(m[2])
		line = it.DataLine + n - 1
		msg += fmt.Sprintf(" in COPY %s row %d", m[1], n)
		if m[3] != "" {
			msg += ", column " + m[3]
		}
	} else if pg.Position > 0 {
		line = it.textLine + strings.Count(prefixRunes(it.SQL, int(pg.Position)-1), "\n")
	}
	if pg.Code == "42P07" { // duplicate_table
		msg += "; the database already holds these tables: load a dump into an empty database"
	}
	return &LoadError{File: name, Line: line, Err: errors.New(msg)}
}

// prefixRunes returns the first n characters of s (PostgreSQL positions count characters).
func prefixRunes(s string, n int) string {
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

type countingReader struct {
	r    io.Reader
	n    int64 // bytes read so far
	size int64 // of the file read
}

// openCounting opens the dump file name at path for reading through cr, which counts the
// bytes read out of the file's size (for progress); the caller closes f.
func openCounting(path, name string) (f *os.File, cr *countingReader, err error) {
	f, err = os.Open(path)
	if err != nil {
		return nil, nil, &LoadError{File: name, Err: err}
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, &LoadError{File: name, Err: err}
	}
	return f, &countingReader{r: f, size: st.Size()}, nil
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
