package dump

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
)

// The one SQL scanner of the package: nextLexeme cuts SQL text into lexemes the way
// PostgreSQL's scanner does for what an exit dump, or a script to refuse, may hold. Parser uses
// it to find where each statement ends (a semicolon outside quotes and comments), and lexSQL
// to read one statement's tokens for CheckStatement, refusing everything outside the subset.

// lexKind is the kind of a lexeme.
type lexKind int

const (
	lxSpace        lexKind = iota + 1 // a run of ' ', \t, \n, \r, \f
	lxLineComment                     // -- up to the line end
	lxBlockComment                    // /* ... */, nested
	lxString                          // '...' ('' inside stands for ')
	lxEscString                       // E'...' (a backslash escapes the next byte)
	lxQuoted                          // "..." ("" inside stands for ")
	lxDollar                          // $tag$...$tag$
	lxIdent                           // a letter, _ or non-ASCII byte, then those, digits and $
	lxNumber                          // a digit, then digits (and any identifier byte after them)
	lxSemicolon                       // ;
	lxOther                           // any other single byte: ( ) , . = $ ...
)

// lexeme is a lexeme of s: s[start:end] of kind. An open one is a quote, comment or dollar
// quote that s ends inside: end is then where scanning goes on once text is appended (resume),
// so that a construct over many lines is scanned once, not once per line.
type lexeme struct {
	kind       lexKind
	start, end int
	open       bool
	depth      int // an open block comment's nesting at end
	tag        int // a dollar quote's tag length
}

// nextLexeme scans the lexeme at s[i] (i < len(s)).
func nextLexeme(s []byte, i int) lexeme {
	c := s[i]
	lx := lexeme{start: i}
	switch {
	case isSQLSpace(c):
		lx.kind, lx.end = lxSpace, skip(s, i+1, isSQLSpace)
	case c == '-' && i+1 < len(s) && s[i+1] == '-':
		lx.kind, lx.end = lxLineComment, skip(s, i+2, func(c byte) bool { return c != '\n' && c != '\r' })
	case c == '/' && i+1 < len(s) && s[i+1] == '*':
		lx.kind, lx.end, lx.depth = lxBlockComment, i+2, 1
		return lx.resume(s)
	case c == '\'':
		lx.kind, lx.end = lxString, i+1
		return lx.resume(s)
	case c == '"':
		lx.kind, lx.end = lxQuoted, i+1
		return lx.resume(s)
	case c == '$':
		// A dollar quote opens where no identifier byte (nor the $ ending another one) is
		// right before it.
		if n := dollarTag(s[i:]); n > 0 && (i == 0 || !isIdentByte(s[i-1])) {
			lx.kind, lx.end, lx.tag = lxDollar, i+n, n
			return lx.resume(s)
		}
		lx.kind, lx.end = lxOther, i+1
	case isIdentByte(c) && !isDigit(c):
		lx.kind, lx.end = lxIdent, skip(s, i+1, isIdentByte)
		if lx.end == i+1 && (c == 'E' || c == 'e') && lx.end < len(s) && s[lx.end] == '\'' && (i == 0 || !isIdentByte(s[i-1])) {
			lx.kind, lx.end = lxEscString, i+2
			return lx.resume(s)
		}
	case isDigit(c):
		lx.kind, lx.end = lxNumber, skip(s, i+1, isIdentByte)
	case c == ';':
		lx.kind, lx.end = lxSemicolon, i+1
	default:
		lx.kind, lx.end = lxOther, i+1
	}
	return lx
}

// skip is the index of the first byte of s from i on that in does not hold.
func skip(s []byte, i int, in func(byte) bool) int {
	for i < len(s) && in(s[i]) {
		i++
	}
	return i
}

// resume scans a quote, comment or dollar quote from lx.end on, to its end or to the end of s
// (open). The text a caller appends starts a line, so that no delimiter spans the two.
func (lx lexeme) resume(s []byte) lexeme {
	lx.open = false
	switch lx.kind {
	case lxBlockComment:
		i := lx.end
		for lx.depth > 0 {
			switch {
			case i+1 >= len(s):
				lx.end, lx.open = i, true
				return lx
			case s[i] == '/' && s[i+1] == '*':
				lx.depth++
				i += 2
			case s[i] == '*' && s[i+1] == '/':
				lx.depth--
				i += 2
			default:
				i++
			}
		}
		lx.end = i
	case lxDollar:
		tag := s[lx.start : lx.start+lx.tag]
		if k := bytes.Index(s[lx.end:], tag); k >= 0 {
			lx.end += k + len(tag)
		} else {
			lx.end, lx.open = max(len(s)-len(tag)+1, lx.end), true
		}
	default: // a string, an escape string or a quoted identifier
		q, escapes := byte('\''), lx.kind == lxEscString
		if lx.kind == lxQuoted {
			q = '"'
		}
		lx.end, lx.open = quotedEnd(s, lx.end, q, escapes)
	}
	return lx
}

// quotedEnd is the index after the quoted text whose content goes on at s[j] (q doubled
// inside stands for itself; with escapes, a backslash also takes the byte after it), or where
// scanning goes on when s ends inside it (open). A quote that ends s closes the text: appended
// text starts a line, so s ends at a line end unless nothing follows.
func quotedEnd(s []byte, j int, q byte, escapes bool) (end int, open bool) {
	for ; j < len(s); j++ {
		switch {
		case escapes && s[j] == '\\':
			j++
		case s[j] != q:
		case j+1 < len(s) && s[j+1] == q:
			j++
		default:
			return j + 1, false
		}
	}
	return len(s), true
}

// dollarTag returns the length of a $tag$ opening at the start of b, or 0.
func dollarTag(b []byte) int {
	for j := 1; j < len(b); j++ {
		c := b[j]
		if c == '$' {
			return j + 1
		}
		if !(c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80 || (j > 1 && isDigit(c))) {
			return 0
		}
	}
	return 0
}

func isSQLSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' }

// isIdentByte is a byte of an identifier: ASCII letters, digits, _, $ and non-ASCII bytes.
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || isDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z') || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// tokKind is the kind of a token of the SQL subset CheckStatement reads.
type tokKind int

const (
	tokIdent  tokKind = iota + 1 // unquoted identifier or keyword, folded to lower case
	tokQuoted                    // "quoted identifier", its text as written
	tokString                    // 'string', its content
	tokNumber                    // unsigned integer
	tokPunct                     // ( ) , . =
)

type token struct {
	kind tokKind
	text string
}

// lexSQL splits one statement into tokens (nextLexeme) and refuses everything outside the
// small subset an exit dump needs: operators, dollar quotes and parameters, prefixed strings
// (E'...', B'...', X'...', N'...', U&'...'), backslashes in strings (so the server's
// standard_conforming_strings cannot change what a string holds), non-integer numbers,
// unquoted non-ASCII names, and semicolons. Comments (--, nested /* */) are skipped. On an
// error it also returns the tokens read before it.
func lexSQL(sql string) ([]token, error) {
	s := []byte(sql)
	var out []token
	identEnd := -1 // offset just after the last identifier
	for i := 0; i < len(s); {
		lx := nextLexeme(s, i)
		if lx.open {
			lx.end = len(s)
		}
		tok, err := sqlToken(s, lx, identEnd == i)
		if tok.kind != 0 {
			out = append(out, tok)
		}
		if err != nil {
			return out, err
		}
		if lx.kind == lxIdent {
			identEnd = lx.end
		}
		i = lx.end
	}
	return out, nil
}

// sqlToken is the token of lx (none for space and comments), or why the lexeme is refused
// (with the token of what comes before the refused part, if any); afterIdent says an
// identifier ends where lx starts.
func sqlToken(s []byte, lx lexeme, afterIdent bool) (token, error) {
	i, end, more := lx.start, lx.end, lx.open
	text := string(s[i:end])
	switch lx.kind {
	case lxSpace, lxLineComment:
		return token{}, nil
	case lxBlockComment:
		if more {
			return token{}, errors.New("unterminated /* comment")
		}
		return token{}, nil
	case lxEscString: // the prefix is an identifier, then the string is refused
		return token{tokIdent, strings.ToLower(text[:1])}, errors.New("prefixed string literals (E'', B'', X'', N'') are not allowed")
	case lxString:
		switch {
		case afterIdent:
			return token{}, errors.New("prefixed string literals (E'', B'', X'', N'') are not allowed")
		case more:
			return token{}, errors.New("unterminated string literal")
		case strings.ContainsRune(text, '\\'):
			return token{}, errors.New("a backslash in a string literal")
		}
		return token{tokString, unquote(text)}, nil
	case lxQuoted:
		switch {
		case more:
			return token{}, errors.New("unterminated quoted identifier")
		case len(text) == 2:
			return token{}, errors.New("an empty quoted identifier")
		}
		return token{tokQuoted, unquote(text)}, nil
	case lxIdent:
		if k := strings.IndexFunc(text, func(r rune) bool { return r >= 0x80 }); k >= 0 {
			var before token // the ASCII identifier before the first non-ASCII byte, if any
			if k > 0 {
				before = token{tokIdent, strings.ToLower(text[:k])}
			}
			return before, errors.New("non-ASCII characters are allowed only in quoted names and strings")
		}
		return token{tokIdent, strings.ToLower(text)}, nil
	case lxNumber:
		if strings.Trim(text, "0123456789") != "" || end < len(s) && s[end] == '.' {
			return token{}, errors.New("only whole numbers are allowed")
		}
		return token{tokNumber, text}, nil
	case lxSemicolon:
		return token{}, errors.New("a second statement after a semicolon")
	case lxDollar:
		return token{}, errors.New("dollar quoting and parameters are not allowed")
	}
	switch c := s[i]; {
	case strings.IndexByte("(),.=", c) >= 0:
		return token{tokPunct, text}, nil
	case c == '$':
		return token{}, errors.New("dollar quoting and parameters are not allowed")
	default:
		return token{}, fmt.Errorf("the character %q is not allowed", rune(c))
	}
}

// unquote is the content of a complete quoted lexeme: its quotes dropped, a doubled quote
// turned into one.
func unquote(text string) string {
	q := text[:1]
	return strings.ReplaceAll(text[1:len(text)-1], q+q, q)
}
