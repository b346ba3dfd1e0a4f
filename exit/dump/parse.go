package dump

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// Parser splits an SQL script the way psql runs it: statements ended by a semicolon outside
// quotes ('...', E'...', "...", $tag$...$tag$) and comments (--, nested /* */), and after a
// `COPY ... FROM stdin` statement, the data lines up to a line holding only `\.`. It reads
// the script as a stream: memory does not grow with the size of a COPY block.
type Parser struct {
	r    *bufio.Reader
	back []byte // rest of a line after a statement's semicolon, read again by the next one
	line int    // lines consumed so far
	copy *copyReader
	err  error
}

// Item is one unit of a script: a statement, or a COPY statement with its data.
type Item struct {
	// SQL is the statement text (comments kept), without the final semicolon.
	SQL string
	// Line is the 1-based line where the statement starts.
	Line int
	// Copy is set for a COPY ... FROM stdin statement: its data rows in COPY text format,
	// without the `\.` terminator. It must be read to the end (or abandoned with the
	// parser) before Next is called again.
	Copy io.Reader
	// DataLine is the line of the first data row of a COPY.
	DataLine int
	// textLine is the line where SQL begins (before Line when comments precede).
	textLine int
}

// ParseError is a script that cannot be split (an unterminated quote, comment or COPY, a
// psql meta-command).
type ParseError struct {
	Line int
	Msg  string
}

func (e *ParseError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// NewParser returns a parser reading r.
func NewParser(r io.Reader) *Parser {
	return &Parser{r: bufio.NewReaderSize(r, 64<<10)}
}

// Line returns the number of lines consumed so far.
func (p *Parser) Line() int { return p.line }

var copyFromStdin = regexp.MustCompile(`(?is)^\s*COPY\b.*\bFROM\s+STDIN\b`)

// restrictLine is pg_dump's \restrict or \unrestrict line (the key is alphanumeric).
var restrictLine = regexp.MustCompile(`^\\(?:un)?restrict[ \t]+[A-Za-z0-9]+[ \t]*\r?\n?$`)

// Next returns the next item, or io.EOF after the last one.
func (p *Parser) Next() (Item, error) {
	if p.err != nil {
		return Item{}, p.err
	}
	if p.copy != nil && !p.copy.done {
		// The caller did not read the COPY data: skip it.
		if _, err := io.Copy(io.Discard, p.copy); err != nil {
			p.err = err
			return Item{}, err
		}
	}
	p.copy = nil
	it, err := p.statement()
	if err != nil {
		p.err = err
		return Item{}, err
	}
	return it, nil
}

// statement scans up to the next semicolon outside quotes and comments (nextLexeme), reading
// lines as it needs them.
func (p *Parser) statement() (Item, error) {
	var st stmtScan
	for {
		chunk, err := p.nextChunk()
		if len(chunk) == 0 && err == io.EOF {
			return Item{}, st.atEOF()
		}
		if err != nil && err != io.EOF {
			return Item{}, err
		}
		if st.pos == len(st.buf) && st.start == 0 && chunk[0] == '\\' {
			if restrictLine.Match(chunk) {
				// pg_dump (since 17.6, 16.10, 15.14, 14.19, 13.22) brackets its output with
				// \restrict KEY ... \unrestrict KEY, which only stop psql from running other
				// meta-commands: nothing to do here, where no meta-command ever runs.
				st = stmtScan{}
				continue
			}
			return Item{}, &ParseError{p.line, "psql meta-command (backslash command) outside a COPY block"}
		}
		if len(st.buf) == 0 {
			st.bufLine = p.line
		}
		st.buf = append(st.buf, chunk...)
		it, done, err := p.scan(&st)
		if done || err != nil {
			return it, err
		}
	}
}

// nextChunk is the rest of the line after the last statement, or the next line.
func (p *Parser) nextChunk() ([]byte, error) {
	if p.back != nil {
		line := p.back
		p.back = nil
		return line, nil
	}
	line, err := p.r.ReadBytes('\n')
	if len(line) > 0 {
		p.line++
	}
	return line, err
}

// stmtScan is a statement being scanned: its text so far, and what is known of it.
type stmtScan struct {
	buf        []byte // the text since the last statement (comments and spaces included)
	pos        int    // where scanning goes on in buf: the start of a lexeme
	bufLine    int    // the line of buf[0]
	start      int    // the line of the first byte that is no comment nor space (0: none yet)
	contentOff int    // its offset in buf
	bare       []byte // buf up to pos with comments blanked, to recognise COPY ... FROM stdin
	open       lexeme // the lexeme at pos that the text so far leaves open (kind 0: none)
}

// lineAt is the line of buf[off].
func (st *stmtScan) lineAt(off int) int { return st.bufLine + bytes.Count(st.buf[:off], []byte("\n")) }

// atEOF is the end of the script while st is scanned: io.EOF, or why the script is cut short.
func (st *stmtScan) atEOF() error {
	switch {
	case st.open.kind == lxBlockComment:
		return &ParseError{st.lineAt(st.pos), "unterminated /* comment"}
	case st.open.kind != 0:
		return &ParseError{st.lineAt(st.pos), "unterminated quoted string or identifier"}
	case st.start > 0:
		return &ParseError{st.start, "statement not ended by a semicolon"}
	}
	return io.EOF
}

// scan goes on scanning st.buf; done is set with the item once a statement ends.
func (p *Parser) scan(st *stmtScan) (it Item, done bool, err error) {
	for st.pos < len(st.buf) {
		var lx lexeme
		if st.open.kind != 0 {
			lx = st.open.resume(st.buf)
		} else {
			lx = nextLexeme(st.buf, st.pos)
		}
		if lx.open {
			st.open = lx // read on: the lexeme goes on on the next line
			return Item{}, false, nil
		}
		st.open = lexeme{}
		kind, end := lx.kind, lx.end
		switch kind {
		case lxSemicolon:
			if st.start == 0 {
				// An empty statement: keep scanning the rest of the line.
				*st = stmtScan{buf: st.buf[end:], bufLine: st.lineAt(end)}
				continue
			}
			it, err := p.item(st, end)
			return it, true, err
		case lxLineComment, lxBlockComment:
			st.bare = append(st.bare, ' ')
		default:
			if st.start == 0 && kind != lxSpace && (kind != lxOther || st.buf[st.pos] != '\v') {
				st.start, st.contentOff = st.lineAt(st.pos), st.pos
			}
			st.bare = append(st.bare, st.buf[st.pos:end]...)
		}
		st.pos = end
	}
	return Item{}, false, nil
}

// item is the statement st ends with the semicolon before end; the rest of its line is scanned
// next, or is a COPY's data.
func (p *Parser) item(st *stmtScan, end int) (Item, error) {
	it := Item{SQL: string(st.buf[:st.pos]), Line: st.start}
	it.textLine = st.start - bytes.Count(st.buf[:st.contentOff], []byte("\n"))
	rest := st.buf[end:]
	if copyFromStdin.Match(st.bare) {
		if len(bytes.TrimSpace(rest)) > 0 {
			return Item{}, &ParseError{p.line, "text after COPY ... FROM stdin; on the same line"}
		}
		p.copy = &copyReader{p: p, atStart: true, startLine: p.line + 1}
		it.Copy = p.copy
		it.DataLine = p.line + 1
		return it, nil
	}
	if len(bytes.TrimSpace(rest)) > 0 {
		p.back = rest // more statements on this line
	}
	return it, nil
}

// copyReader yields the data lines of a COPY block.
type copyReader struct {
	p         *Parser
	pending   []byte
	atStart   bool
	done      bool
	startLine int
	err       *ParseError // why the data ended early, kept for the loader
}

var errUnterminatedCopy = errors.New(`COPY data not ended by its closing line (\. alone)`)

func (c *copyReader) Read(b []byte) (int, error) {
	for len(c.pending) == 0 {
		if c.done {
			return 0, io.EOF
		}
		line, err := c.p.r.ReadSlice('\n')
		if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
			return 0, err
		}
		if c.atStart && isTerminator(line) {
			c.done = true
			c.p.line++
			return 0, io.EOF
		}
		if err == io.EOF {
			c.done = true
			c.err = &ParseError{c.startLine, errUnterminatedCopy.Error()}
			return 0, c.err
		}
		c.atStart = line[len(line)-1] == '\n'
		if c.atStart {
			c.p.line++
		}
		c.pending = line
	}
	n := copy(b, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

// isTerminator reports whether a COPY data line is the end marker `\.` (with an optional
// carriage return, and no newline on the last line of a file).
func isTerminator(line []byte) bool {
	line = bytes.TrimSuffix(line, []byte("\n"))
	line = bytes.TrimSuffix(line, []byte("\r"))
	return string(line) == `\.`
}
