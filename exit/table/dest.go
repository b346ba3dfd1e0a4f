package table

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// dest is the destination table and the run's own tables beside it.
type dest struct {
	pool     *pgxpool.Pool
	table    string // quoted
	progress string // quoted <to-table>_progress
	errors   string // quoted <to-table>_errors
	copyRows string // the COPY statement of the rows
	copyErrs string
}

func newDest(pool *pgxpool.Pool, name string, s *source) *dest {
	parts := strings.Split(name, ".")
	with := func(suffix string) string {
		p := append([]string(nil), parts...)
		p[len(p)-1] += suffix
		return pgx.Identifier(p).Sanitize()
	}
	d := &dest{pool: pool, table: ident(name), progress: with("_progress"), errors: with("_errors")}
	d.copyRows = "COPY " + d.table + " (" + s.list + ") FROM STDIN (FORMAT binary)"
	d.copyErrs = "COPY " + d.errors + " (key, field, code, message) FROM STDIN (FORMAT binary)"
	return d
}

// want is the destination's column list: the source's, each field as the clear type.
func (r *run) want() []column {
	out := append([]column(nil), r.src.cols...)
	for _, i := range r.src.flds {
		out[i].typ = r.clearType()
	}
	return out
}

func (r *run) clearType() string {
	if r.opts.ClearText {
		return "text"
	}
	return "bytea"
}

// exists reports whether the relation name (quoted) exists.
func exists(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, name string) (bool, error) {
	var ok bool
	err := q.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", name).Scan(&ok)
	return ok, err
}

// checkColumns refuses an existing destination that lacks a column of want or has it with
// another type, naming each difference.
func (d *dest) checkColumns(ctx context.Context, want []column) error {
	rows, err := d.pool.Query(ctx, `SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute
		WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`, d.table)
	if err != nil {
		return configErrorf("read the destination's columns: %s", pgMessage(err))
	}
	have := map[string]string{}
	for rows.Next() {
		var n, t string
		if err := rows.Scan(&n, &t); err != nil {
			return configErrorf("read the destination's columns: %s", pgMessage(err))
		}
		have[n] = t
	}
	if err := rows.Err(); err != nil {
		return configErrorf("read the destination's columns: %s", pgMessage(err))
	}
	var diffs []string
	for _, c := range want {
		switch t, ok := have[c.name]; {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("no column %s (%s)", c.name, c.typ))
		case t != c.typ:
			diffs = append(diffs, fmt.Sprintf("column %s is %s, not %s", c.name, t, c.typ))
		}
	}
	if len(diffs) > 0 {
		return configErrorf("the destination %s does not fit the source: %s", d.table, strings.Join(diffs, "; "))
	}
	return nil
}

// create makes the destination (if absent) and the run's tables, under a transaction-scoped
// advisory lock so that two runs starting at once agree.
func (d *dest) create(ctx context.Context, want []column, key column, createTable bool) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return configErrorf("connect to the destination (--to): %s", pgMessage(err))
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtext('idvault decrypt-table create'))"); err != nil {
		return configErrorf("lock the destination: %s", pgMessage(err))
	}
	var stmts []string
	if createTable {
		var cols []string
		for _, c := range want {
			cols = append(cols, pgx.Identifier{c.name}.Sanitize()+" "+c.typ)
		}
		cols = append(cols, "PRIMARY KEY ("+pgx.Identifier{key.name}.Sanitize()+")")
		stmts = append(stmts, "CREATE TABLE IF NOT EXISTS "+d.table+" ("+strings.Join(cols, ", ")+")")
	}
	stmts = append(stmts,
		"CREATE TABLE IF NOT EXISTS "+d.errors+" (key "+key.typ+" NOT NULL, field text NOT NULL, code text NOT NULL, message text NOT NULL, PRIMARY KEY (key, field))",
		"CREATE TABLE IF NOT EXISTS "+d.progress+` (range_no int PRIMARY KEY, lo bytea, hi bytea, last_key bytea,
			rows_done bigint NOT NULL DEFAULT 0, decrypted bigint NOT NULL DEFAULT 0, empty bigint NOT NULL DEFAULT 0,
			failed bigint NOT NULL DEFAULT 0, finished boolean NOT NULL DEFAULT false, command text NOT NULL)`)
	for _, s := range stmts {
		if _, err := tx.Exec(ctx, s); err != nil {
			return configErrorf("create the destination's tables: %s", pgMessage(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return configErrorf("create the destination's tables: %s", pgMessage(err))
	}
	return nil
}

// keyRange is one part of the key space: keys in (lo, hi], nil for no bound; last is the last
// key committed (nil: none yet).
type keyRange struct {
	no        int
	lo, hi    []byte
	last      []byte
	finished  bool
	committed counts
}

// loadRanges reads the progress: the ranges and the command that wrote them (empty when the
// destination holds no progress).
func (d *dest) loadRanges(ctx context.Context) ([]*keyRange, string, error) {
	rows, err := d.pool.Query(ctx, "SELECT range_no, lo, hi, last_key, rows_done, decrypted, empty, failed, finished, command FROM "+d.progress+" ORDER BY range_no")
	if err != nil {
		return nil, "", configErrorf("read the progress: %s", pgMessage(err))
	}
	defer rows.Close()
	var (
		out []*keyRange
		cmd string
	)
	for rows.Next() {
		r := &keyRange{}
		if err := rows.Scan(&r.no, &r.lo, &r.hi, &r.last, &r.committed.rows, &r.committed.decrypted, &r.committed.empty, &r.committed.failed, &r.finished, &cmd); err != nil {
			return nil, "", configErrorf("read the progress: %s", pgMessage(err))
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, "", configErrorf("read the progress: %s", pgMessage(err))
	}
	return out, cmd, nil
}

// start writes a fresh run's ranges with its command, in one transaction; restart first
// empties the destination, its errors and its progress in the same transaction.
func (d *dest) start(ctx context.Context, bounds [][]byte, cmd string, restart bool) ([]*keyRange, error) {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return nil, fmt.Errorf("start the run: %s", pgMessage(err))
	}
	defer tx.Rollback(ctx) //nolint:errcheck // after Commit, a no-op
	if restart {
		if _, err := tx.Exec(ctx, "TRUNCATE "+d.table+", "+d.errors+", "+d.progress); err != nil {
			return nil, fmt.Errorf("restart: empty the destination: %s", pgMessage(err))
		}
	}
	var out []*keyRange
	for i := 0; i <= len(bounds); i++ {
		r := &keyRange{no: i}
		if i > 0 {
			r.lo = bounds[i-1]
		}
		if i < len(bounds) {
			r.hi = bounds[i]
		}
		if _, err := tx.Exec(ctx, "INSERT INTO "+d.progress+" (range_no, lo, hi, command) VALUES ($1, $2, $3, $4)", r.no, r.lo, r.hi, cmd); err != nil {
			return nil, fmt.Errorf("start the run: %s", pgMessage(err))
		}
		out = append(out, r)
	}
	if err := tx.Commit(ctx); err != nil {
		return nil, fmt.Errorf("start the run: %s", pgMessage(err))
	}
	return out, nil
}

// empty reports whether the destination holds no row.
func (d *dest) empty(ctx context.Context) (bool, error) {
	var any bool
	if err := d.pool.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM "+d.table+")").Scan(&any); err != nil {
		return false, configErrorf("read the destination: %s", pgMessage(err))
	}
	return !any, nil
}

// errProgressMoved reports a range whose progress is not where this run left it: another
// process wrote it (the advisory lock keeps runs apart; this is the last guard).
var errProgressMoved = errors.New("the progress of a range moved under this run: is another run writing this destination?")
