package dump

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// An exit dump comes from outside, and PostgreSQL runs whatever SQL it is given (COPY ... TO
// PROGRAM runs a program on the database host). Load therefore runs only the statement kinds
// an exit dump holds, checked here on the whole text of each statement:
//
//   - CREATE TABLE of one of the nine tables of exit/dump/FORMAT.md, with exactly its columns and
//     types (any order, NULL or NOT NULL, no defaults, no other constraint);
//   - COPY <table> (<columns>) FROM stdin, known columns, text format;
//   - ALTER TABLE [ONLY] <table> ADD [CONSTRAINT <name>] PRIMARY KEY (<columns>), and the
//     ALTER TABLE ... OWNER TO <role> that pg_dump writes after each CREATE TABLE;
//   - CREATE INDEX <name> ON [ONLY] <table> [USING btree] (<columns>);
//   - the session settings pg_dump writes (SET statement_timeout, lock_timeout,
//     idle_in_transaction_session_timeout, transaction_timeout, client_encoding = UTF8,
//     standard_conforming_strings = on, check_function_bodies, xmloption, client_min_messages,
//     row_security, default_tablespace, default_table_access_method = heap, default_with_oids =
//     false) and SELECT pg_catalog.set_config('search_path', '', false).
//
// A table name may carry the schema public (pg_dump writes public.users). Comments are allowed
// anywhere. Everything else is refused: another statement, a function call, an expression, a
// dollar-quoted or escape string, an operator, a second statement.

// ErrRefused is wrapped by every *RefusedError.
var ErrRefused = errors.New("statement refused")

// RefusedError is a statement that is not part of an exit dump. Reason names what was found,
// never more than a keyword or a name of the statement.
type RefusedError struct {
	Reason string
	// BeforeRun says the statement was found while checking the whole dump, before anything ran.
	BeforeRun bool
}

func (e *RefusedError) Error() string {
	msg := "statement refused: " + e.Reason + " (an exit dump holds only the CREATE TABLE, COPY ... FROM stdin, " +
		"ADD PRIMARY KEY and CREATE INDEX statements of exit/dump/FORMAT.md and pg_dump's session settings)"
	if e.BeforeRun {
		msg += "; nothing was run"
	}
	return msg
}

// Unwrap returns ErrRefused.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// StatementKind is the kind of an allowed statement.
type StatementKind int

// The statement kinds of an exit dump.
const (
	StmtCreateTable StatementKind = iota + 1
	StmtCopy                      // COPY ... FROM stdin: data follows
	StmtPrimaryKey
	StmtOwner
	StmtCreateIndex
	StmtSetting // SET, or set_config of search_path
)

// Statement is an allowed statement: its kind, and the table it is about (none for settings).
type Statement struct {
	Kind  StatementKind
	Table string
}

// CheckStatement checks one statement's text (without its final semicolon, comments allowed)
// against the statements of an exit dump: a *RefusedError says why one is not.
func CheckStatement(sql string) (Statement, error) {
	if strings.IndexByte(sql, 0) >= 0 {
		// The protocol ends a query at a NUL: the server would not run the text checked here.
		return Statement{}, &RefusedError{Reason: "a NUL byte in the statement"}
	}
	toks, err := lexSQL(sql)
	if err != nil {
		// Name the kind of statement when it is refused anyway (CREATE FUNCTION ... $$).
		if reason := leadReason(toks); reason != "" {
			return Statement{}, &RefusedError{Reason: reason}
		}
		return Statement{}, &RefusedError{Reason: err.Error()}
	}
	c := &cursor{toks: toks}
	st, reason := c.statement()
	if reason != "" {
		return Statement{}, &RefusedError{Reason: reason}
	}
	return st, nil
}

// column types of the dump, by the names CREATE TABLE may use.
const (
	typeBytea       = "bytea"
	typeTimestamptz = "timestamptz"
	typeBoolean     = "boolean"
	typeSmallint    = "smallint"
	typeText        = "text"
)

// schemaTypes maps table -> column -> type, read from SchemaSQL (the tables of exit/dump/FORMAT.md).
var schemaTypes = func() map[string]map[string]string {
	out := map[string]map[string]string{}
	p := NewParser(strings.NewReader(SchemaSQL))
	for {
		it, err := p.Next()
		if err != nil {
			break
		}
		toks, err := lexSQL(it.SQL)
		if err != nil {
			panic("dump: SchemaSQL: " + err.Error())
		}
		c := &cursor{toks: toks}
		c.word("create")
		c.word("table")
		name, _ := c.name()
		cols, reason := c.columnDefs()
		if reason != "" || !c.end() {
			panic("dump: SchemaSQL: " + reason)
		}
		out[name] = cols
	}
	if len(out) != 9 {
		panic("dump: SchemaSQL does not hold the nine tables")
	}
	return out
}()

// settings are the SET parameters pg_dump writes, with the values allowed (nil: any single
// literal). client_encoding and standard_conforming_strings are fixed because the statement
// splitter reads the file as UTF-8 with standard strings: another value would make
// PostgreSQL read quotes where the splitter does not.
var settings = map[string][]string{
	"statement_timeout":                   nil,
	"lock_timeout":                        nil,
	"idle_in_transaction_session_timeout": nil,
	"transaction_timeout":                 nil,
	"client_encoding":                     {"utf8"},
	"standard_conforming_strings":         {"on", "true"},
	"check_function_bodies":               nil,
	"xmloption":                           nil,
	"client_min_messages":                 nil,
	"row_security":                        nil,
	"default_tablespace":                  nil,
	"default_table_access_method":         {"heap"},
	"default_with_oids":                   {"false", "off"},
}

type cursor struct {
	toks []token
	i    int
}

func (c *cursor) peek() (token, bool) {
	if c.i >= len(c.toks) {
		return token{}, false
	}
	return c.toks[c.i], true
}

// word consumes the unquoted keyword w if it comes next.
func (c *cursor) word(w string) bool {
	if t, ok := c.peek(); ok && t.kind == tokIdent && t.text == w {
		c.i++
		return true
	}
	return false
}

// words consumes the keywords ws if they all come next, else nothing.
func (c *cursor) words(ws ...string) bool {
	start := c.i
	for _, w := range ws {
		if !c.word(w) {
			c.i = start
			return false
		}
	}
	return true
}

func (c *cursor) punct(p string) bool {
	if t, ok := c.peek(); ok && t.kind == tokPunct && t.text == p {
		c.i++
		return true
	}
	return false
}

func (c *cursor) end() bool { return c.i == len(c.toks) }

// ident consumes a name: an unquoted identifier (folded to lower case) or a quoted one.
func (c *cursor) ident() (string, bool) {
	if t, ok := c.peek(); ok && (t.kind == tokIdent || t.kind == tokQuoted) {
		c.i++
		return t.text, true
	}
	return "", false
}

// name reads [public.]name.
func (c *cursor) name() (string, bool) {
	n, ok := c.ident()
	if !ok {
		return "", false
	}
	if c.punct(".") {
		if n != "public" {
			return "", false
		}
		return c.ident()
	}
	return n, true
}

// table reads a table name that must be one of the dump's.
func (c *cursor) table() (string, string) {
	n, ok := c.name()
	switch {
	case !ok:
		return "", "a table name (or public.name) was expected"
	case schemaTypes[n] == nil:
		return "", fmt.Sprintf("table %q is not a table of an exit dump (exit/dump/FORMAT.md)", n)
	}
	return n, ""
}

// columnList reads (col, ...) of known, distinct columns of table.
func (c *cursor) columnList(table string) string {
	if !c.punct("(") {
		return "a list of columns in parentheses was expected"
	}
	var seen []string
	for {
		col, ok := c.ident()
		if !ok {
			return "only column names are allowed in the list of columns"
		}
		if _, known := schemaTypes[table][col]; !known {
			return fmt.Sprintf("column %q is not a column of %s in an exit dump (exit/dump/FORMAT.md)", col, table)
		}
		if slices.Contains(seen, col) {
			return fmt.Sprintf("column %q is listed twice", col)
		}
		seen = append(seen, col)
		if c.punct(")") {
			return ""
		}
		if !c.punct(",") {
			return "only column names are allowed in the list of columns"
		}
	}
}

// leadReason returns why a statement is refused from its first keywords alone, or "".
func leadReason(toks []token) string {
	word := func(i int) string {
		if i < len(toks) && toks[i].kind == tokIdent {
			return toks[i].text
		}
		return ""
	}
	switch first := word(0); first {
	case "":
	case "create":
		if w := word(1); w != "" && w != "table" && w != "index" {
			return "CREATE of anything but a table or an index"
		}
	case "alter":
		if w := word(1); w != "" && w != "table" {
			return "ALTER of anything but a table"
		}
	case "set":
		if _, ok := settings[word(1)]; word(1) != "" && !ok {
			return fmt.Sprintf("SET %s is not a setting pg_dump writes", word(1))
		}
	case "copy", "select":
	default:
		return fmt.Sprintf("%s is not a statement of an exit dump", strings.ToUpper(first))
	}
	return ""
}

func (c *cursor) statement() (Statement, string) {
	t, ok := c.peek()
	if !ok {
		return Statement{}, "an empty statement"
	}
	if t.kind != tokIdent {
		return Statement{}, "a statement must start with a keyword"
	}
	c.i++
	var st Statement
	var reason string
	switch t.text {
	case "create":
		switch {
		case c.word("table"):
			st, reason = c.createTable()
		case c.word("index"):
			st, reason = c.createIndex()
		default:
			return st, "CREATE of anything but a table or an index"
		}
	case "copy":
		st, reason = c.copyFrom()
	case "alter":
		if !c.word("table") {
			return st, "ALTER of anything but a table"
		}
		st, reason = c.alterTable()
	case "set":
		st, reason = c.set()
	case "select":
		st, reason = c.setConfig()
	default:
		return st, fmt.Sprintf("%s is not a statement of an exit dump", strings.ToUpper(t.text))
	}
	if reason == "" && !c.end() {
		reason = "text after the end of the statement"
	}
	return st, reason
}

func (c *cursor) createTable() (Statement, string) {
	table, reason := c.table()
	if reason != "" {
		return Statement{}, reason
	}
	cols, reason := c.columnDefs()
	if reason != "" {
		return Statement{}, "CREATE TABLE " + table + ": " + reason
	}
	want := schemaTypes[table]
	for col, typ := range cols {
		switch w, ok := want[col]; {
		case !ok:
			return Statement{}, fmt.Sprintf("CREATE TABLE %s: column %q is not a column of %s in an exit dump (exit/dump/FORMAT.md)", table, col, table)
		case w != typ:
			return Statement{}, fmt.Sprintf("CREATE TABLE %s: column %s is %s, an exit dump has %s (exit/dump/FORMAT.md)", table, col, typ, w)
		}
	}
	if len(cols) != len(want) {
		return Statement{}, fmt.Sprintf("CREATE TABLE %s: %d columns, an exit dump has %d (exit/dump/FORMAT.md)", table, len(cols), len(want))
	}
	return Statement{Kind: StmtCreateTable, Table: table}, ""
}

// columnDefs reads (name type [[NOT] NULL], ...) with the dump's types only.
func (c *cursor) columnDefs() (map[string]string, string) {
	if !c.punct("(") {
		return nil, "column definitions in parentheses were expected"
	}
	cols := map[string]string{}
	for {
		col, ok := c.ident()
		if !ok {
			return nil, "a column name was expected"
		}
		if _, dup := cols[col]; dup {
			return nil, fmt.Sprintf("column %q is defined twice", col)
		}
		typ := c.columnType()
		if typ == "" {
			return nil, fmt.Sprintf("column %q: only the types bytea, timestamptz (timestamp with time zone), boolean, smallint and text are allowed", col)
		}
		cols[col] = typ
		if !c.words("not", "null") {
			c.word("null")
		}
		if c.punct(")") {
			return cols, ""
		}
		if !c.punct(",") {
			return nil, fmt.Sprintf("column %q: only NOT NULL or NULL may follow the type", col)
		}
	}
}

func (c *cursor) columnType() string {
	switch {
	case c.word("bytea"):
		return typeBytea
	case c.word("timestamptz"), c.words("timestamp", "with", "time", "zone"):
		return typeTimestamptz
	case c.word("boolean"), c.word("bool"):
		return typeBoolean
	case c.word("smallint"), c.word("int2"):
		return typeSmallint
	case c.word("text"):
		return typeText
	}
	return ""
}

func (c *cursor) copyFrom() (Statement, string) {
	const form = "COPY must be COPY <table> (<columns>) FROM stdin"
	if t, ok := c.peek(); ok && t.kind == tokPunct && t.text == "(" {
		return Statement{}, "COPY of a query: " + form
	}
	table, reason := c.table()
	if reason != "" {
		return Statement{}, reason
	}
	if reason := c.columnList(table); reason != "" {
		return Statement{}, "COPY " + table + ": " + reason
	}
	switch {
	case c.words("from", "stdin"):
		if !c.end() {
			return Statement{}, "COPY " + table + " with options: " + form + " (text format)"
		}
	case c.word("to"):
		return Statement{}, "COPY ... TO: " + form
	case c.word("from"):
		return Statement{}, "COPY from a file or a program: " + form
	default:
		return Statement{}, form
	}
	return Statement{Kind: StmtCopy, Table: table}, ""
}

func (c *cursor) alterTable() (Statement, string) {
	c.word("only")
	table, reason := c.table()
	if reason != "" {
		return Statement{}, reason
	}
	switch {
	case c.word("add"):
		if c.word("constraint") {
			if _, ok := c.ident(); !ok {
				return Statement{}, "ALTER TABLE " + table + " ADD CONSTRAINT: a constraint name was expected"
			}
		}
		if !c.words("primary", "key") {
			return Statement{}, "ALTER TABLE " + table + " ADD of anything but a PRIMARY KEY"
		}
		if reason := c.columnList(table); reason != "" {
			return Statement{}, "ALTER TABLE " + table + " ADD PRIMARY KEY: " + reason
		}
		return Statement{Kind: StmtPrimaryKey, Table: table}, ""
	case c.words("owner", "to"):
		if _, ok := c.ident(); !ok {
			return Statement{}, "ALTER TABLE " + table + " OWNER TO: a role name was expected"
		}
		return Statement{Kind: StmtOwner, Table: table}, ""
	}
	return Statement{}, "ALTER TABLE " + table + " other than ADD PRIMARY KEY or OWNER TO"
}

func (c *cursor) createIndex() (Statement, string) {
	const form = "CREATE INDEX must be CREATE INDEX <name> ON <table> [USING btree] (<columns>)"
	if _, ok := c.ident(); !ok || !c.word("on") {
		return Statement{}, form
	}
	c.word("only")
	table, reason := c.table()
	if reason != "" {
		return Statement{}, reason
	}
	if c.word("using") && !c.word("btree") {
		return Statement{}, "CREATE INDEX on " + table + ": only btree indexes are allowed"
	}
	if reason := c.columnList(table); reason != "" {
		return Statement{}, "CREATE INDEX on " + table + ": " + reason
	}
	return Statement{Kind: StmtCreateIndex, Table: table}, ""
}

func (c *cursor) set() (Statement, string) {
	t, ok := c.peek()
	if !ok || t.kind != tokIdent {
		return Statement{}, "SET of something but a session setting pg_dump writes"
	}
	allowed, known := settings[t.text]
	if !known {
		return Statement{}, fmt.Sprintf("SET %s is not a setting pg_dump writes", t.text)
	}
	c.i++
	if !c.punct("=") && !c.word("to") {
		return Statement{}, "SET " + t.text + ": = or TO was expected"
	}
	v, ok := c.peek()
	if !ok || v.kind == tokPunct || v.kind == tokQuoted {
		return Statement{}, "SET " + t.text + ": one value was expected"
	}
	c.i++
	if allowed != nil {
		val := strings.ToLower(v.text)
		if t.text == "client_encoding" {
			val = strings.NewReplacer("-", "", "_", "").Replace(val)
		}
		if !slices.Contains(allowed, val) {
			return Statement{}, fmt.Sprintf("SET %s: only %s is allowed", t.text, strings.Join(allowed, " or "))
		}
	}
	return Statement{Kind: StmtSetting}, ""
}

func (c *cursor) setConfig() (Statement, string) {
	const form = "SELECT is allowed only as pg_dump's SELECT pg_catalog.set_config('search_path', '', false)"
	if c.word("pg_catalog") && !c.punct(".") {
		return Statement{}, form
	}
	if !c.word("set_config") || !c.punct("(") {
		return Statement{}, form
	}
	for i, want := range []string{"search_path", "", "false"} {
		t, ok := c.peek()
		kind := tokString
		if i == 2 {
			kind = tokIdent
		}
		if !ok || t.kind != kind || t.text != want {
			return Statement{}, form
		}
		c.i++
		sep := ","
		if i == 2 {
			sep = ")"
		}
		if !c.punct(sep) {
			return Statement{}, form
		}
	}
	return Statement{Kind: StmtSetting}, ""
}
