package table

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Type OIDs of the columns a ciphertext may be held in.
const (
	oidBytea   = 17
	oidText    = 25
	oidVarchar = 1043
	oidUUID    = 2950
)

// column is one column of the source, as the destination gets it.
type column struct {
	name  string
	oid   uint32
	typ   string // format_type: "bigint", "character varying(20)", "public.mood"
	field bool   // a ciphertext column
	text  bool   // a ciphertext column of text (decoded with Options.Decode); bytea otherwise
}

// source is what the run reads: a table or a query, its columns, its key.
type source struct {
	pool *pgxpool.Pool
	from string // "schema"."table", or (query) AS src
	cols []column
	key  int   // index of the key column in cols
	flds []int // indexes of the ciphertext columns in cols, in Options.Fields order
	// qkey is the key column quoted; list the columns' list quoted, for SELECT.
	qkey, list string
	// decode is Options.Decode: the text ciphertexts are decoded as they are read.
	decode func(dst, text []byte) ([]byte, error)
}

// ident quotes a possibly schema-qualified name ("public.messages") as an SQL identifier.
func ident(name string) string { return pgx.Identifier(strings.Split(name, ".")).Sanitize() }

// describe finds the source's columns and checks the key and the fields: every check of the
// source is done here, before anything is written. Problems are *ConfigError.
func describe(ctx context.Context, pool *pgxpool.Pool, opts *Options) (*source, error) {
	s := &source{pool: pool, decode: opts.Decode}
	if opts.Table != "" {
		s.from = ident(opts.Table)
	} else {
		s.from = "(" + strings.TrimRight(strings.TrimSpace(opts.Query), ";") + ") AS src"
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return nil, configErrorf("connect to the source (--from): %s", pgMessage(err))
	}
	defer conn.Release()
	rr := conn.Conn().PgConn().ExecParams(ctx, "SELECT * FROM "+s.from+" LIMIT 0", nil, nil, nil, []int16{pgx.BinaryFormatCode})
	fds := append([]pgconn.FieldDescription(nil), rr.FieldDescriptions()...)
	if _, err := rr.Close(); err != nil {
		what := "--table " + opts.Table
		if opts.Table == "" {
			what = "--query"
		}
		return nil, configErrorf("read the source (%s): %s", what, pgMessage(err))
	}
	names, err := s.readColumns(ctx, conn, fds, opts.Key)
	if err != nil {
		return nil, err
	}
	if s.key < 0 {
		return nil, configErrorf("--key %s is not a column of the source (columns: %s)", opts.Key, strings.Join(colNames(s.cols), ", "))
	}
	if err := s.markFields(opts.Fields); err != nil {
		return nil, err
	}
	s.qkey, s.list = pgx.Identifier{opts.Key}.Sanitize(), strings.Join(names, ", ")
	if err := s.checkKey(ctx, conn, opts); err != nil {
		return nil, err
	}
	return s, nil
}

// readColumns sets the source's columns from their descriptions fds, with their types as
// format_type names them, and the key's index (-1 when no column is named key). It returns
// the columns' names quoted.
func (s *source) readColumns(ctx context.Context, conn *pgxpool.Conn, fds []pgconn.FieldDescription, key string) ([]string, error) {
	s.key = -1
	seen := map[string]bool{}
	var names []string
	for i, fd := range fds {
		if seen[fd.Name] {
			return nil, configErrorf("the source has two columns named %q: name them apart (AS) in --query", fd.Name)
		}
		seen[fd.Name] = true
		var typ string
		if err := conn.QueryRow(ctx, "SELECT format_type($1, $2)", fd.DataTypeOID, fd.TypeModifier).Scan(&typ); err != nil {
			return nil, configErrorf("read the source's column types: %s", pgMessage(err))
		}
		s.cols = append(s.cols, column{name: fd.Name, oid: fd.DataTypeOID, typ: typ})
		names = append(names, pgx.Identifier{fd.Name}.Sanitize())
		if fd.Name == key {
			s.key = i
		}
	}
	return names, nil
}

// markFields checks the ciphertext columns (Options.Fields) and marks them in s.cols, in
// s.flds in their order.
func (s *source) markFields(fields []string) error {
	for _, f := range fields {
		i := indexOf(s.cols, f)
		switch {
		case i < 0:
			return configErrorf("--field %s is not a column of the source (columns: %s)", f, strings.Join(colNames(s.cols), ", "))
		case i == s.key:
			return configErrorf("--field %s is the key: the key stays as it is", f)
		case s.cols[i].field:
			return configErrorf("--field %s is given twice", f)
		}
		switch s.cols[i].oid {
		case oidText, oidVarchar:
			s.cols[i].text = true
		case oidBytea:
		default:
			return configErrorf("--field %s is of type %s: a ciphertext column is text or varchar (base64 or hex) or bytea (raw)", f, s.cols[i].typ)
		}
		s.cols[i].field = true
		s.flds = append(s.flds, i)
	}
	return nil
}

// checkKey checks the key: it is read in order and resumed after, so it must be orderable,
// and (for a table, where the catalog tells) unique and NOT NULL, or rows would be skipped.
func (s *source) checkKey(ctx context.Context, conn *pgxpool.Conn, opts *Options) error {
	if _, err := conn.Exec(ctx, "SELECT "+s.qkey+" FROM "+s.from+" ORDER BY 1 LIMIT 0"); err != nil {
		return configErrorf("--key %s cannot be ordered: %s", opts.Key, pgMessage(err))
	}
	if opts.Table == "" {
		return nil
	}
	var unique, notNull bool
	err := conn.QueryRow(ctx, `SELECT a.attnotnull, EXISTS (SELECT 1 FROM pg_index i WHERE i.indrelid = a.attrelid
			AND i.indisunique AND i.indisvalid AND i.indpred IS NULL AND i.indnkeyatts = 1 AND i.indkey[0] = a.attnum)
			FROM pg_attribute a WHERE a.attrelid = $1::regclass AND a.attname = $2`, s.from, opts.Key).Scan(&notNull, &unique)
	if err != nil {
		return configErrorf("read the source's key: %s", pgMessage(err))
	}
	if !notNull || !unique {
		return configErrorf("--key %s is not a unique NOT NULL column of %s (a primary key, or a unique index on it alone and NOT NULL): rows would be missed", opts.Key, opts.Table)
	}
	return nil
}

func colNames(cols []column) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.name
	}
	return out
}

func indexOf(cols []column, name string) int {
	for i, c := range cols {
		if c.name == name {
			return i
		}
	}
	return -1
}

// estimate is the source's row count: the planner's when allowed (a table analysed at least
// once, and no opts.Count), else count(*).
func (s *source) estimate(ctx context.Context, opts *Options) (int64, error) {
	if opts.Table != "" && !opts.Count {
		var n float64
		err := s.pool.QueryRow(ctx, "SELECT reltuples::float8 FROM pg_class WHERE oid = $1::regclass", s.from).Scan(&n)
		if err == nil && n >= 0 {
			return int64(n), nil
		}
	}
	var n int64
	if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.from).Scan(&n); err != nil {
		return 0, fmt.Errorf("count the source's rows: %s", pgMessage(err))
	}
	return n, nil
}

// boundaries returns up to n-1 keys (binary) that split the source into n ranges of about
// the same number of rows, given its estimated size: one pass over the key in order.
func (s *source) boundaries(ctx context.Context, total int64, n int) ([][]byte, error) {
	if n <= 1 || total < int64(n) {
		return nil, nil
	}
	step := (total + int64(n) - 1) / int64(n)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("split the source: %s", pgMessage(err))
	}
	defer conn.Release()
	sql := fmt.Sprintf("SELECT k FROM (SELECT %s AS k, row_number() OVER (ORDER BY %s) AS rn FROM %s) q WHERE rn %% %d = 0 ORDER BY k LIMIT %d",
		s.qkey, s.qkey, s.from, step, n-1)
	rr := conn.Conn().PgConn().ExecParams(ctx, sql, nil, nil, nil, []int16{pgx.BinaryFormatCode})
	var out [][]byte
	for rr.NextRow() {
		out = append(out, append([]byte(nil), rr.Values()[0]...))
	}
	if _, err := rr.Close(); err != nil {
		return nil, fmt.Errorf("split the source: %s", pgMessage(err))
	}
	return out, nil
}
