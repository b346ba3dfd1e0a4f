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

type quoteState int

const (
	qNone quoteState = iota
	qSingle
	qEscSingle // E'...'
	qDouble
	qDollar
	qBlock
)

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

// statement scans up to the next semicolon outside quotes and comments.
func (p *Parser) statement() (Item, error) {
	var (
		sql        bytes.Buffer
		bare       bytes.Buffer // the text outside comments, to recognise COPY
		state      quoteState
		depth      int    // nesting of /* */
		tag        []byte // current $tag$
		start      int
		hasContent bool
		contentOff int // offset in sql of the first character that is not a comment or space
		stateLine  int
	)
	for {
		var line []byte
		var err error
		if p.back != nil {
			line, p.back = p.back, nil
		} else {
			line, err = p.r.ReadBytes('\n')
			if len(line) > 0 {
				p.line++
			}
		}
		if len(line) == 0 && err == io.EOF {
			switch {
			case state == qBlock:
				return Item{}, &ParseError{stateLine, "unterminated /* comment"}
			case state != qNone:
				return Item{}, &ParseError{stateLine, "unterminated quoted string or identifier"}
			case hasContent:
				return Item{}, &ParseError{start, "statement not ended by a semicolon"}
			}
			return Item{}, io.EOF
		}
		if err != nil && err != io.EOF {
			return Item{}, err
		}
		if state == qNone && !hasContent && len(line) > 0 && line[0] == '\\' {
			if restrictLine.Match(line) {
				// pg_dump (since 17.6, 16.10, 15.14, 14.19, 13.22) brackets its output with
				// \restrict KEY ... \unrestrict KEY, which only stop psql from running other
				// meta-commands: nothing to do here, where no meta-command ever runs.
				sql.Reset()
				bare.Reset()
				continue
			}
			return Item{}, &ParseError{p.line, "psql meta-command (backslash command) outside a COPY block"}
		}
		for i := 0; i < len(line); i++ {
			c := line[i]
			switch state {
			case qNone:
				switch {
				case c == '-' && i+1 < len(line) && line[i+1] == '-':
					sql.Write(line[i:])
					bare.WriteByte('\n')
					i = len(line)
					continue
				case c == '/' && i+1 < len(line) && line[i+1] == '*':
					state, depth, stateLine = qBlock, 1, p.line
					sql.WriteString("/*")
					bare.WriteByte(' ')
					i++
					continue
				case c == ';':
					it := Item{SQL: sql.String(), Line: start}
					it.textLine = start - bytes.Count(sql.Bytes()[:contentOff], []byte("\n"))
					rest := bytes.TrimSpace(line[i+1:])
					if !hasContent {
						// An empty statement: keep scanning the rest of the line.
						sql.Reset()
						bare.Reset()
						continue
					}
					if copyFromStdin.Match(bare.Bytes()) {
						if len(rest) > 0 {
							return Item{}, &ParseError{p.line, "text after COPY ... FROM stdin; on the same line"}
						}
						p.copy = &copyReader{p: p, atStart: true, startLine: p.line + 1}
						it.Copy = p.copy
						it.DataLine = p.line + 1
						return it, nil
					}
					if len(rest) > 0 {
						p.back = line[i+1:] // more statements on this line
					}
					return it, nil
				case c == '\'':
					state, stateLine = qSingle, p.line
					if i > 0 && (line[i-1] == 'E' || line[i-1] == 'e') && (i < 2 || !isIdent(line[i-2])) {
						state = qEscSingle
					}
				case c == '"':
					state, stateLine = qDouble, p.line
				case c == '$' && (i == 0 || !isIdent(line[i-1])):
					if j := dollarTag(line[i:]); j > 0 {
						tag = append(tag[:0], line[i:i+j]...)
						state, stateLine = qDollar, p.line
						sql.Write(tag)
						bare.Write(tag)
						i += j - 1
						if !hasContent {
							hasContent, start, contentOff = true, p.line, sql.Len()-len(tag)
						}
						continue
					}
				}
				if !hasContent && !isSpace(c) {
					hasContent, start, contentOff = true, p.line, sql.Len()
				}
				sql.WriteByte(c)
				bare.WriteByte(c)
			case qSingle, qEscSingle:
				sql.WriteByte(c)
				bare.WriteByte(c)
				if state == qEscSingle && c == '\\' && i+1 < len(line) {
					i++
					sql.WriteByte(line[i])
					bare.WriteByte(line[i])
				} else if c == '\'' {
					state = qNone // a doubled '' re-enters the string on the next byte
				}
			case qDouble:
				sql.WriteByte(c)
				bare.WriteByte(c)
				if c == '"' {
					state = qNone
				}
			case qDollar:
				if c == '$' && bytes.HasPrefix(line[i:], tag) {
					sql.Write(tag)
					bare.Write(tag)
					i += len(tag) - 1
					state = qNone
					continue
				}
				sql.WriteByte(c)
				bare.WriteByte(c)
			case qBlock:
				switch {
				case c == '*' && i+1 < len(line) && line[i+1] == '/':
					depth--
					sql.WriteString("*/")
					i++
					if depth == 0 {
						state = qNone
					}
				case c == '/' && i+1 < len(line) && line[i+1] == '*':
					depth++
					sql.WriteString("/*")
					i++
				default:
					sql.WriteByte(c)
				}
			}
		}
	}
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// dollarTag returns the length of a $tag$ opening at the start of b, or 0.
func dollarTag(b []byte) int {
	for j := 1; j < len(b); j++ {
		c := b[j]
		if c == '$' {
			return j + 1
		}
		if !(c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80 || (j > 1 && c >= '0' && c <= '9')) {
			return 0
		}
	}
	return 0
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
