package exitdb

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// pollInterval is how often Forget looks again for the holders it waits for.
const pollInterval = 250 * time.Millisecond

// forgetter is one Forget: its connection, the notices the server sent on it, and when it
// stops waiting.
type forgetter struct {
	conn     *pgx.Conn
	start    time.Time
	deadline time.Time

	mu      sync.Mutex
	notices []*pgconn.Notice
}

func newForgetter(ctx context.Context, dsn string, wait time.Duration) (*forgetter, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, errInvalidDSN
	}
	f := &forgetter{start: time.Now()}
	f.deadline = f.start.Add(max(wait, 0))
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		f.mu.Lock()
		f.notices = append(f.notices, n)
		f.mu.Unlock()
	}
	if f.conn, err = pgx.ConnectConfig(ctx, cfg); err != nil {
		return nil, dbError(ctx, "connect", err)
	}
	return f, nil
}

// takeNotices returns the notices received since the last call.
func (f *forgetter) takeNotices() []*pgconn.Notice {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.notices
	f.notices = nil
	return n
}

// warnings turns the WARNINGs received since the last call into an error: VACUUM and ANALYZE
// skip a table this role may not maintain with a warning, not an error.
func (f *forgetter) warnings() error { return warningsIn(f.takeNotices()) }

// warningsIn turns the WARNINGs among notices into an error.
func warningsIn(notices []*pgconn.Notice) error {
	var msgs []string
	for _, n := range notices {
		if n.SeverityUnlocalized == "WARNING" || n.Severity == "WARNING" {
			msgs = append(msgs, n.Message)
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("exit database: forget: PostgreSQL warned: %s", strings.Join(msgs, "; "))
}

// checkPrivileges refuses a role that may not do every step of Forget, before anything is
// deleted: rewriting pg_statistic needs the database owner or a superuser (who may also
// rewrite and analyse the tables, whoever owns them), and the placeholder row needs SELECT,
// INSERT and DELETE on the tables. pg_statistic is rewritten whether or not the tables'
// statistics hold values now: those an earlier run replaced may still be in its file.
func (f *forgetter) checkPrivileges(ctx context.Context, tables []string) error {
	var may bool
	var dbOwner string
	err := f.conn.QueryRow(ctx, `SELECT r.rolsuper OR pg_has_role(d.datdba, 'USAGE'), pg_get_userbyid(d.datdba)
		FROM pg_database d, pg_roles r WHERE d.datname = current_database() AND r.rolname = current_user`).Scan(&may, &dbOwner)
	if err != nil {
		return dbError(ctx, "forget: check privileges", err)
	}
	if !may {
		return fmt.Errorf("exit database: forget: it rewrites pg_statistic, whose file keeps the statistics PostgreSQL replaces "+
			"(ANALYZE's samples of the keys among them), and that needs the owner of the database (%s) or a superuser: run forget as one of them", dbOwner)
	}
	rows, err := f.conn.Query(ctx, `SELECT t FROM unnest($1::text[]) AS t
		WHERE NOT (has_table_privilege(t, 'SELECT') AND has_table_privilege(t, 'INSERT') AND has_table_privilege(t, 'DELETE'))
		ORDER BY 1`, tables)
	if err != nil {
		return dbError(ctx, "forget: check privileges", err)
	}
	lacking, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return dbError(ctx, "forget: check privileges", err)
	}
	if len(lacking) > 0 {
		return fmt.Errorf("exit database: forget: it deletes the rows of %s and analyses a placeholder row there, "+
			"which needs SELECT, INSERT and DELETE on them: grant them to this role, or run forget as their owner", strings.Join(lacking, ", "))
	}
	return nil
}

// rewriteUntilClean rewrites tables (and pg_statistic with catalog) until none of their files
// keeps a row deleted by the transaction xid (or before it), waiting for what holds them
// until the deadline; then it returns a *HeldError.
func (f *forgetter) rewriteUntilClean(ctx context.Context, xid string, tables []string, catalog bool) error {
	for {
		before, err := holders(ctx, f.conn, xid, catalog)
		if err != nil {
			return dbError(ctx, "forget: look for older snapshots", err)
		}
		held, locked, err := f.rewrite(ctx, tables, catalog, len(before) == 0)
		if err != nil {
			return err
		}
		if len(held) == 0 {
			return nil
		}
		if !time.Now().Before(f.deadline) {
			now, err := holders(ctx, f.conn, xid, catalog)
			if err != nil {
				return dbError(ctx, "forget: look for older snapshots", err)
			}
			locks, err := lockHolders(ctx, f.conn, tables)
			if err != nil {
				return dbError(ctx, "forget: look for locks", err)
			}
			return &HeldError{Relations: held, Holders: mergeHolders(mergeHolders(now, locks), locked), Waited: time.Since(f.start)}
		}
		if err := f.waitForHolders(ctx, xid, tables, catalog); err != nil {
			return err
		}
	}
}

// waitForHolders waits until no older snapshot and no lock on tables is found (or for one
// poll interval when none is found now), or the deadline.
func (f *forgetter) waitForHolders(ctx context.Context, xid string, tables []string, catalog bool) error {
	for first := true; ; first = false {
		hs, err := holders(ctx, f.conn, xid, catalog)
		if err != nil {
			return dbError(ctx, "forget: look for older snapshots", err)
		}
		locks, err := lockHolders(ctx, f.conn, tables)
		if err != nil {
			return dbError(ctx, "forget: look for locks", err)
		}
		if len(hs)+len(locks) == 0 && !first {
			return nil
		}
		wait := min(pollInterval, time.Until(f.deadline))
		if wait <= 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("exit database: forget: rows deleted, but waiting for older snapshots: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
}

// deadRowsKept reads "N dead row versions cannot be removed yet" in VACUUM VERBOSE's detail.
var deadRowsKept = regexp.MustCompile(`(?m)^(\d+) dead row versions cannot be removed yet`)

// rewrite runs VACUUM FULL on each table, and on pg_statistic with catalog, and returns those
// whose new files may still hold deleted rows, and the sessions whose locks it waited for in
// vain. A table of ImportTables is clean when its rewritten files are empty while it holds no
// row. pg_statistic always holds rows: it is clean when VACUUM reports that it kept no dead
// row (the message is English unless lc_messages says otherwise), or when noHolders says that
// no older snapshot was found before the rewrite began.
func (f *forgetter) rewrite(ctx context.Context, tables []string, catalog, noHolders bool) (held []string, locked []Holder, err error) {
	// A lock wait ends at the deadline (at least a short try).
	lockWait := max(time.Until(f.deadline), 100*time.Millisecond)
	if _, err := f.conn.Exec(ctx, "SET lock_timeout = "+strconv.FormatInt(lockWait.Milliseconds(), 10)); err != nil {
		return nil, nil, dbError(ctx, "forget: set lock_timeout", err)
	}
	defer func() {
		if _, rerr := f.conn.Exec(ctx, "RESET lock_timeout"); rerr != nil && err == nil {
			err = dbError(ctx, "forget: reset lock_timeout", rerr)
		}
	}()
	relations := tables
	if catalog {
		relations = append(relations[:len(relations):len(relations)], "pg_statistic")
	}
	for _, t := range relations {
		f.takeNotices()
		_, err := f.conn.Exec(ctx, "VACUUM FULL VERBOSE "+t)
		if pg := (*pgconn.PgError)(nil); errors.As(err, &pg) && pg.Code == "55P03" { // lock_not_available
			hs, err := lockHolders(ctx, f.conn, []string{t})
			if err != nil {
				return nil, nil, dbError(ctx, "forget: look for locks", err)
			}
			held, locked = append(held, t), mergeHolders(locked, hs)
			continue
		}
		if err != nil {
			return nil, nil, dbError(ctx, "forget: rows deleted, but rewriting "+t+" failed", err)
		}
		notices := f.takeNotices()
		if err := warningsIn(notices); err != nil {
			return nil, nil, err
		}
		if t == "pg_statistic" {
			if !noHolders && keptDeadRows(notices) != 0 {
				held = append(held, t)
			}
			continue
		}
		var size int64
		var rows bool
		err = f.conn.QueryRow(ctx, `SELECT pg_relation_size(c.oid) + coalesce(pg_relation_size(NULLIF(c.reltoastrelid, 0)), 0),
			EXISTS (SELECT 1 FROM `+t+`) FROM pg_class c WHERE c.oid = to_regclass($1)`, t).Scan(&size, &rows)
		if err != nil {
			return nil, nil, dbError(ctx, "forget: check the rewritten "+t, err)
		}
		if rows {
			return nil, nil, fmt.Errorf("exit database: forget: %s holds rows again: an import ran while forgetting; stop every exit server and rerun", t)
		}
		if size > 0 {
			held = append(held, t)
		}
	}
	return held, locked, nil
}

// keptDeadRows returns the dead rows VACUUM VERBOSE said it kept, or -1 when no notice says.
func keptDeadRows(notices []*pgconn.Notice) int64 {
	n := int64(-1)
	for _, no := range notices {
		if m := deadRowsKept.FindStringSubmatch(no.Detail); m != nil {
			k, _ := strconv.ParseInt(m[1], 10, 64)
			n = max(n, 0) + k
		}
	}
	return n
}
