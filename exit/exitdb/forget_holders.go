package exitdb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// Holder is what keeps PostgreSQL from removing deleted rows: a session, a prepared transaction
// or a replication slot whose snapshot (or transaction) is older than the delete, or a session
// holding a lock on a table to rewrite.
type Holder struct {
	// Kind is "session", "prepared transaction" or "replication slot".
	Kind string
	// PID is the server process of a session (or of a slot's active consumer); 0 if none.
	PID int32
	// User is the session's role, or the owner of a prepared transaction.
	User string
	// Application is the session's application_name.
	Application string
	// Name is the prepared transaction's GID or the slot's name.
	Name string
	// Since is when the session's transaction (else the session) or the prepared
	// transaction started; zero when PostgreSQL does not show it to this role.
	Since time.Time
	// Lock is true for a session that holds a lock on a table to rewrite.
	Lock bool
}

// String reads "session pid 4242 (user alice, application psql, in a transaction since
// 2026-01-31T12:00:00Z)".
func (h Holder) String() string {
	var parts []string
	if h.User != "" {
		parts = append(parts, "user "+h.User)
	}
	if h.Application != "" {
		parts = append(parts, "application "+h.Application)
	}
	if !h.Since.IsZero() {
		parts = append(parts, "since "+h.Since.UTC().Format(time.RFC3339))
	}
	if h.Lock {
		parts = append(parts, "holding a lock on the tables")
	}
	var s string
	switch h.Kind {
	case "session":
		s = fmt.Sprintf("session pid %d", h.PID)
	case "replication slot":
		s = fmt.Sprintf("replication slot %q", h.Name)
		if h.PID != 0 {
			parts = append(parts, fmt.Sprintf("used by pid %d", h.PID))
		}
	default:
		s = fmt.Sprintf("%s %q", h.Kind, h.Name)
	}
	if len(parts) == 0 {
		return s
	}
	return s + " (" + strings.Join(parts, ", ") + ")"
}

// HeldError reports that rewriting left deleted rows in the files of Relations: PostgreSQL
// keeps them (as recently dead) for the older snapshots of Holders, or could not rewrite
// while Holders held locks. The rows are deleted, but their keys may still be read from the
// files: run Forget again once the holders are gone.
type HeldError struct {
	// Relations are the tables whose files may still hold deleted keys.
	Relations []string
	// Holders are what holds them, as found when Forget gave up (may be empty when the
	// holder ended in between or is not visible to this role).
	Holders []Holder
	// Waited is how long Forget waited for the holders.
	Waited time.Duration
}

// Error names the relations and the holders.
func (e *HeldError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit database: forget: the rows are deleted, but the files of %s may still hold them after waiting %s",
		strings.Join(e.Relations, ", "), e.Waited.Round(time.Second))
	if len(e.Holders) == 0 {
		b.WriteString(": no older snapshot or lock was found any more")
		return b.String()
	}
	b.WriteString(": PostgreSQL keeps them for ")
	for i, h := range e.Holders {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(h.String())
	}
	return b.String()
}

// xidArg is the 32-bit transaction ID of the current transaction, as text for $n::xid.
const xidArg = `SELECT (txid_current() % 4294967296)::text`

// holders lists the sessions, prepared transactions and replication slots whose snapshot or
// transaction is not newer than the transaction xid (so VACUUM must keep what xid deleted).
// A slot's catalog_xmin counts only with catalog (it holds back catalogs like pg_statistic).
// Sessions of other databases do not hold back this database's tables; walsenders
// (no database) and slots do.
func holders(ctx context.Context, conn *pgx.Conn, xid string, catalog bool) ([]Holder, error) {
	rows, err := conn.Query(ctx, `
		SELECT 'session', pid, coalesce(usename, ''), coalesce(application_name, ''), '',
			coalesce(xact_start, backend_start)
		FROM pg_stat_activity
		WHERE pid <> pg_backend_pid() AND (datid IS NULL OR datname = current_database())
			AND ((backend_xmin IS NOT NULL AND age(backend_xmin) >= age($1::text::xid))
				OR (backend_xid IS NOT NULL AND age(backend_xid) >= age($1::text::xid)))
		UNION ALL
		SELECT 'prepared transaction', 0, owner, '', gid, prepared
		FROM pg_prepared_xacts
		WHERE database = current_database() AND age(transaction) >= age($1::text::xid)
		UNION ALL
		SELECT 'replication slot', coalesce(active_pid, 0), '', '', slot_name::text, NULL
		FROM pg_replication_slots
		WHERE (xmin IS NOT NULL AND age(xmin) >= age($1::text::xid))
			OR ($2 AND catalog_xmin IS NOT NULL AND age(catalog_xmin) >= age($1::text::xid))
		ORDER BY 1, 2, 5`, xid, catalog)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, scanHolder)
}

// lockHolders lists the sessions holding a lock on one of tables.
func lockHolders(ctx context.Context, conn *pgx.Conn, tables []string) ([]Holder, error) {
	rows, err := conn.Query(ctx, `
		SELECT DISTINCT 'session', a.pid, coalesce(a.usename, ''), coalesce(a.application_name, ''), '',
			coalesce(a.xact_start, a.backend_start)
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
		WHERE l.granted AND l.pid <> pg_backend_pid() AND l.locktype = 'relation'
			AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
			AND l.relation IN (SELECT to_regclass(t) FROM unnest($1::text[]) AS t)
		ORDER BY 2`, tables)
	if err != nil {
		return nil, err
	}
	hs, err := pgx.CollectRows(rows, scanHolder)
	for i := range hs {
		hs[i].Lock = true
	}
	return hs, err
}

func scanHolder(row pgx.CollectableRow) (Holder, error) {
	var h Holder
	var since *time.Time
	err := row.Scan(&h.Kind, &h.PID, &h.User, &h.Application, &h.Name, &since)
	if since != nil {
		h.Since = *since
	}
	return h, err
}

// mergeHolders appends to a the holders of b it does not list yet (a lock holder that also
// holds a snapshot is listed once, marked Lock).
func mergeHolders(a, b []Holder) []Holder {
next:
	for _, h := range b {
		for i := range a {
			if a[i].Kind == h.Kind && a[i].PID == h.PID && a[i].Name == h.Name {
				a[i].Lock = a[i].Lock || h.Lock
				continue next
			}
		}
		a = append(a, h)
	}
	return a
}
