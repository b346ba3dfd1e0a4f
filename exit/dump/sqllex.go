package dump

import (
	"errors"
	"fmt"
	"strings"
)

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

// lexSQL splits one statement into tokens the way PostgreSQL's scanner does for the small
// subset an exit dump needs, and refuses everything outside it: operators, dollar quotes and
// parameters, prefixed strings (E'...', B'...', X'...', N'...', U&'...'), backslashes in strings (so the
// server's standard_conforming_strings cannot change what a string holds), non-integer numbers,
// unquoted non-ASCII names, and semicolons. Comments (--, nested /* */) are skipped. On an
// error it also returns the tokens read before it.
func lexSQL(s string) (toks []token, err error) {
	var out []token
	defer func() {
		if err != nil {
			toks = out
		}
	}()
	identEnd := -1 // offset just after the last unquoted identifier
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' && s[i] != '\r' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			depth := 1
			for i += 2; depth > 0; {
				switch {
				case i+1 >= len(s):
					return nil, errors.New("unterminated /* comment")
				case s[i] == '/' && s[i+1] == '*':
					depth++
					i += 2
				case s[i] == '*' && s[i+1] == '/':
					depth--
					i += 2
				default:
					i++
				}
			}
		case c == '\'':
			if identEnd == i {
				return nil, errors.New("prefixed string literals (E'', B'', X'', N'') are not allowed")
			}
			text, n, err := quoted(s[i:], '\'')
			if err != nil {
				return nil, err
			}
			if strings.ContainsRune(text, '\\') {
				return nil, errors.New("a backslash in a string literal")
			}
			out = append(out, token{tokString, text})
			i += n
		case c == '"':
			text, n, err := quoted(s[i:], '"')
			if err != nil {
				return nil, err
			}
			if text == "" {
				return nil, errors.New("an empty quoted identifier")
			}
			out = append(out, token{tokQuoted, text})
			i += n
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && (isIdentStart(s[j]) || isDigit(s[j]) || s[j] == '$') {
				j++
			}
			out = append(out, token{tokIdent, strings.ToLower(s[i:j])})
			i, identEnd = j, j
		case isDigit(c):
			j := i + 1
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			if j < len(s) && (isIdentStart(s[j]) || s[j] == '.' || s[j] == '$' || s[j] >= 0x80) {
				return nil, errors.New("only whole numbers are allowed")
			}
			out = append(out, token{tokNumber, s[i:j]})
			i = j
		case strings.IndexByte("(),.=", c) >= 0:
			out = append(out, token{tokPunct, string(c)})
			i++
		case c == ';':
			return nil, errors.New("a second statement after a semicolon")
		case c == '$':
			return nil, errors.New("dollar quoting and parameters are not allowed")
		case c >= 0x80:
			return nil, errors.New("non-ASCII characters are allowed only in quoted names and strings")
		default:
			return nil, fmt.Errorf("the character %q is not allowed", rune(c))
		}
	}
	return out, nil
}

// quoted reads a quoted string or identifier at the start of s (q doubled inside stands for
// itself) and returns its content and length.
func quoted(s string, q byte) (string, int, error) {
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		if s[i] != q {
			b.WriteByte(s[i])
			continue
		}
		if i+1 < len(s) && s[i+1] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i + 1, nil
	}
	if q == '"' {
		return "", 0, errors.New("unterminated quoted identifier")
	}
	return "", 0, errors.New("unterminated string literal")
}

func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
