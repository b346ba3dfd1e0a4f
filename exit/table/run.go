package table

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Defaults of Options.
const (
	DefaultBatchRows = 2000
	// rangesPerWorker is how many key ranges a fresh run splits the source into per worker:
	// a worker that ends its range early takes another, so the workers end together.
	rangesPerWorker = 4
)

// Options describe a run.
type Options struct {
	// From and To are the source's and the destination's connection strings (To may equal
	// From).
	From, To string
	// Table names the source table (NAME or SCHEMA.NAME, as in the catalog); Query is a
	// SELECT instead. One of the two.
	Table, Query string
	// Key is the source's unique, NOT NULL, orderable column.
	Key string
	// Fields are the ciphertext columns: text or varchar (decoded with Decode) or bytea.
	Fields []string
	// ToTable is the destination table (NAME or SCHEMA.NAME), created when absent.
	ToTable string
	// ClearText makes the clear columns text (refusing bytes that are not UTF-8 or hold NUL,
	// as not_text); bytea otherwise.
	ClearText bool
	// Decode appends the bytes of a text ciphertext (base64, hex) to dst, and returns the
	// extended slice (dst unchanged on an error).
	Decode func(dst, text []byte) ([]byte, error)
	// Seal, when set, turns each clear value into what the destination holds (an age file).
	Seal func(clear []byte) ([]byte, error)
	// Decrypter decrypts the ciphertexts.
	Decrypter Decrypter
	// Workers is the number of ranges read, decrypted and written at once (default 1);
	// BatchRows the rows of a batch (default DefaultBatchRows).
	Workers, BatchRows int
	// Restart drops the progress of an earlier run on the destination, with the rows it
	// wrote, and starts over.
	Restart bool
	// Count counts the source's rows exactly for the progress (count(*)) rather than taking
	// the planner's estimate.
	Count bool
	// Command describes what else decides the destination's bytes (the ciphertexts'
	// encoding, the age recipients): part of what a rerun must repeat.
	Command string
	// Progress, when set, is called after each committed batch, one call at a time.
	Progress func(Progress)
	// LockWait is how long a run waits for another one to leave the destination (a run killed
	// a moment ago, whose session the server has not closed yet) before refusing (default 15 s).
	LockWait time.Duration
	// Warn, when set, receives notices for the user (the role may not set
	// log_error_verbosity).
	Warn func(string)
}

// Progress is where a run is: rows in the destination (earlier runs included) of the
// estimated total, and failed fields so far.
type Progress struct {
	Done, Total, Failed int64
}

// Report is the outcome of a run. The counts are the destination's, over every run of the
// command on it (a resumed run counts what the earlier ones wrote).
type Report struct {
	Rows      int64 `json:"rows"`
	Decrypted int64 `json:"decrypted"`
	Empty     int64 `json:"empty"`
	Failed    int64 `json:"failed"`
	// ThisRun is the rows this run wrote; Total the source's estimated rows.
	ThisRun int64 `json:"rows_this_run"`
	Total   int64 `json:"estimated_total"`
	Resumed bool  `json:"resumed"`
}

// run is one Run's state.
type run struct {
	opts     *Options
	src      *source
	dst      *dest
	types    *pgtype.Map
	fieldPos []int // per source column, its index in src.flds, or -1

	mu     sync.Mutex
	done   counts // over every run
	total  int64
	thisRn int64
}

// Run decrypts the source's fields into the destination (see the package doc). Problems found
// before anything is written are *ConfigError; a run that stops later (the servers gone, a
// database error, a batch the destination refused) returns its error with the report so far,
// and a rerun of the same Options continues it; ctx ending returns ctx.Err().
func Run(ctx context.Context, opts Options) (Report, error) {
	rep, err := runOpts(ctx, opts)
	if err != nil && ctx.Err() != nil {
		return rep, ctx.Err() // whatever failed, it failed for the interruption
	}
	return rep, err
}

// runOpts does Run's work: it connects, checks the source and the destination, takes the
// destination's lock and runs the ranges left.
func runOpts(ctx context.Context, opts Options) (Report, error) {
	var rep Report
	if err := opts.check(); err != nil {
		return rep, err
	}
	srcPool, err := openPool(ctx, opts.From, "--from", int32(opts.Workers+2), nil)
	if err != nil {
		return rep, err
	}
	defer srcPool.Close()
	var terse sessionFlags
	dstPool, err := openPool(ctx, opts.To, "--to", int32(opts.Workers+3), &terse)
	if err != nil {
		return rep, err
	}
	defer dstPool.Close()
	r := &run{opts: &opts, types: pgtype.NewMap()}
	if r.src, err = describe(ctx, srcPool, &opts); err != nil {
		return rep, err
	}
	r.fieldPos = fieldPositions(r.src)
	r.dst = newDest(dstPool, opts.ToTable, r.src)
	lock, err := lockDest(ctx, dstPool, r.dst.table, &opts)
	if err != nil {
		return rep, err
	}
	defer lock.Release()
	ranges, resumed, err := r.prepare(ctx)
	if err != nil {
		return rep, err
	}
	if !terse.ok() && opts.Warn != nil {
		opts.Warn("the destination's role may not set log_error_verbosity (a superuser's setting, or GRANT SET ON PARAMETER): a row the destination refuses (a CHECK constraint, a trigger) would have its clear values in the DETAIL of the PostgreSQL server log")
	}
	rep.Resumed = resumed
	err = r.work(ctx, ranges)
	// The batches commit without waiting for the disk: the run's end, whatever ends it, waits
	// until they are there, so that the summary counts only rows a crash cannot take back.
	if ferr := r.dst.flush(ctx); err == nil && ctx.Err() == nil {
		err = ferr
	}
	r.report(&rep)
	if ctx.Err() != nil {
		return rep, ctx.Err()
	}
	return rep, err
}

// fieldPositions is, per column of src, its index in src.flds, or -1.
func fieldPositions(src *source) []int {
	pos := make([]int, len(src.cols))
	for i := range pos {
		pos[i] = -1
	}
	for j, ci := range src.flds {
		pos[ci] = j
	}
	return pos
}

// lockDest takes the lock of the destination table on a connection of pool, and returns
// that connection: one run at a time on a destination. It is a session lock, released when
// this process ends however it ends.
func lockDest(ctx context.Context, pool *pgxpool.Pool, table string, opts *Options) (*pgxpool.Conn, error) {
	lock, err := pool.Acquire(ctx)
	if err != nil {
		return nil, configErrorf("connect to the destination (--to): %s", pgMessage(err))
	}
	if err := advisoryLock(ctx, lock, table, opts); err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// advisoryLock takes the lock of table on conn, waiting Options.LockWait at most: a run
// killed a moment ago may still hold it until its server session notices.
func advisoryLock(ctx context.Context, conn *pgxpool.Conn, table string, opts *Options) error {
	wait := opts.LockWait
	if wait <= 0 {
		wait = 15 * time.Second
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("SET lock_timeout = %d", wait.Milliseconds())); err != nil {
		return configErrorf("lock the destination: %s", pgMessage(err))
	}
	_, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext('idvault decrypt-table ' || current_database() || ' ' || $1))", table)
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == "55P03" { // lock_not_available
		return &ConfigError{Msg: ErrLocked.Error() + " (" + opts.ToTable + ")"}
	}
	if err != nil {
		return configErrorf("lock the destination: %s", pgMessage(err))
	}
	if _, err := conn.Exec(ctx, "RESET lock_timeout"); err != nil {
		return configErrorf("lock the destination: %s", pgMessage(err))
	}
	return nil
}

// report fills in rep's counts from the run's.
func (r *run) report(rep *Report) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rep.Rows, rep.Decrypted, rep.Empty, rep.Failed = r.done.rows, r.done.decrypted, r.done.empty, r.done.failed
	rep.ThisRun, rep.Total = r.thisRn, r.total
}

func (o *Options) check() error {
	switch {
	case (o.Table == "") == (o.Query == ""):
		return configErrorf("give the source as --table or as --query, one of the two")
	case o.Key == "":
		return configErrorf("--key is needed")
	case len(o.Fields) == 0:
		return configErrorf("--field is needed")
	case o.ToTable == "":
		return configErrorf("--to-table is needed")
	case o.Decrypter == nil || o.Decode == nil:
		return errors.New("table: Options.Decrypter and Decode are needed")
	}
	if o.Workers <= 0 {
		o.Workers = 1
	}
	if o.BatchRows <= 0 {
		o.BatchRows = DefaultBatchRows
	}
	if o.To == "" {
		o.To = o.From
	}
	return nil
}

// sessionFlags records whether every destination session could set log_error_verbosity.
type sessionFlags struct {
	mu     sync.Mutex
	denied bool
}

func (f *sessionFlags) ok() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return !f.denied
}

// flushTimeout bounds the final synchronous commit of a run, interrupted ones included.
const flushTimeout = 30 * time.Second

// flush commits a transaction with the session's synchronous_commit as the server, database
// or role configure it (the sessions turn it off for the batches): PostgreSQL writes the write-
// ahead log in order, so once this commit is on disk every batch committed before it is too. It
// runs after an interruption as well (ctx ended), so that the summary's counts hold. The
// progress table exists by then (range 0 is every run's first).
func (d *dest) flush(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), flushTimeout)
	defer cancel()
	err := pgx.BeginFunc(ctx, d.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SET LOCAL synchronous_commit TO DEFAULT"); err != nil {
			return err
		}
		// PostgreSQL waits for the disk only for a transaction that wrote to the log: a row of
		// the progress written again, unchanged.
		_, err := tx.Exec(ctx, "UPDATE "+d.progress+" SET finished = finished WHERE range_no = 0")
		return err
	})
	if err != nil {
		return fmt.Errorf("flush the destination's commits to disk: %s", pgMessage(err))
	}
	return nil
}

// pgReadBuffer is the read buffer of each PostgreSQL connection.
const pgReadBuffer = 64 << 10

// openPool connects to dsn (flag names it in messages: pgx's own message may quote the DSN,
// password included, so a bad one is named by its flag only). terse, when set, makes each
// session keep row values out of the server log where allowed, and commit without waiting
// for the disk: a batch and its progress commit together, so a commit lost in a crash loses
// both, and the rerun writes the batch again; the run's end waits for the disk (flush).
func openPool(ctx context.Context, dsn, flag string, conns int32, terse *sessionFlags) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, configErrorf("%s is not a PostgreSQL connection string or URL", flag)
	}
	cfg.MaxConns = conns
	// Rows come in messages of a few hundred bytes, which pgx reads 8 KiB at a time: a bigger
	// buffer between them takes what the socket holds in fewer system calls.
	cfg.ConnConfig.BuildFrontend = func(r io.Reader, w io.Writer) *pgproto3.Frontend {
		return pgproto3.NewFrontend(bufio.NewReaderSize(r, pgReadBuffer), w)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "idvault decrypt-table"
	if terse != nil {
		cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
			if _, err := c.Exec(ctx, "SET log_error_verbosity = terse"); err != nil {
				terse.mu.Lock()
				terse.denied = true
				terse.mu.Unlock()
			}
			_, err := c.Exec(ctx, "SET synchronous_commit = off")
			return err
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, configErrorf("connect to %s: %s", flag, pgMessage(err))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, configErrorf("connect to %s: %s", flag, pgMessage(err))
	}
	return pool, nil
}

// command is what a rerun must repeat to continue a run: the source, the key, the fields,
// the clear type and the caller's Command.
func (r *run) command(ctx context.Context) (string, error) {
	var db string
	if err := r.src.pool.QueryRow(ctx, "SELECT current_database()").Scan(&db); err != nil {
		return "", configErrorf("read the source: %s", pgMessage(err))
	}
	raw, err := json.Marshal(map[string]any{"source_db": db, "table": r.opts.Table, "query": r.opts.Query, "key": r.opts.Key,
		"fields": r.opts.Fields, "clear_type": r.clearType(), "options": r.opts.Command})
	return string(raw), err
}

// prepare checks the destination against the source and the progress against the command,
// creates what is missing and returns the ranges left to do; resumed says an earlier run's
// progress is continued.
func (r *run) prepare(ctx context.Context) ([]*keyRange, bool, error) {
	cmd, err := r.command(ctx)
	if err != nil {
		return nil, false, err
	}
	d := r.dst
	ranges, tableThere, err := r.checkDest(ctx, cmd)
	if err != nil {
		return nil, false, err
	}
	if err := d.create(ctx, r.want(), r.src.cols[r.src.key], !tableThere); err != nil {
		return nil, false, err
	}
	resumed := len(ranges) > 0 && !r.opts.Restart
	// A fresh run counts the rows: the ranges are split on the count (a stale estimate would
	// put nearly every row in the last range). A resumed run's progress takes the estimate.
	count := *r.opts
	count.Count = count.Count || !resumed
	if r.total, err = r.src.estimate(ctx, &count); err != nil {
		return nil, false, err
	}
	if !resumed {
		bounds, err := r.src.boundaries(ctx, r.total, r.opts.Workers*rangesPerWorker)
		if err != nil {
			return nil, false, err
		}
		if ranges, err = d.start(ctx, bounds, cmd, len(ranges) > 0); err != nil {
			return nil, false, err
		}
	}
	var left []*keyRange
	for _, rg := range ranges {
		r.done.add(rg.committed)
		if !rg.finished {
			left = append(left, rg)
		}
	}
	return left, resumed, nil
}

// checkDest checks what the destination holds: a progress only of the command cmd (unless
// Options.Restart), and a table with the columns wanted that is empty or one runs wrote to.
// It returns the progress's ranges and whether the table exists.
func (r *run) checkDest(ctx context.Context, cmd string) ([]*keyRange, bool, error) {
	d := r.dst
	tableThere, err := exists(ctx, d.pool, d.table)
	if err != nil {
		return nil, false, configErrorf("read the destination: %s", pgMessage(err))
	}
	progressThere, err := exists(ctx, d.pool, d.progress)
	if err != nil {
		return nil, false, configErrorf("read the destination: %s", pgMessage(err))
	}
	var ranges []*keyRange
	if progressThere {
		var prev string
		if ranges, prev, err = d.loadRanges(ctx); err != nil {
			return nil, false, err
		}
		if len(ranges) > 0 && prev != cmd && !r.opts.Restart {
			return nil, false, configErrorf("%s holds the progress of another command (%s): rerun that command to continue it, or give --restart to drop it and the rows it wrote", r.opts.ToTable, describeCommand(prev))
		}
	}
	if tableThere {
		if err := d.checkColumns(ctx, r.want()); err != nil {
			return nil, false, err
		}
		if len(ranges) == 0 {
			empty, err := d.empty(ctx)
			if err != nil {
				return nil, false, err
			}
			if !empty {
				return nil, false, configErrorf("%s holds rows that no decrypt-table run wrote: name an empty or a new table", r.opts.ToTable)
			}
		}
	}
	return ranges, tableThere, nil
}

// describeCommand is a stored command for a message: its source, key and fields.
func describeCommand(raw string) string {
	var c struct {
		Table, Query, Key string
		Fields            []string
		ClearType         string `json:"clear_type"`
	}
	if json.Unmarshal([]byte(raw), &c) != nil {
		return "unreadable"
	}
	src := "--table " + c.Table
	if c.Table == "" {
		src = "--query"
	}
	return fmt.Sprintf("%s --key %s --field %v --clear-type %s", src, c.Key, c.Fields, c.ClearType)
}
