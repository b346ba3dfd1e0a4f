package exitdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/idvault/idvault/exit/chain"
)

// ErrUnavailable reports a database that cannot be reached or went away.
var ErrUnavailable = errors.New("database unavailable")

// SchemaError reports a database that does not hold a usable dump of the
// app. Missing names what is absent: "table users", "trustchains row for
// app <base64 ID>".
type SchemaError struct {
	Missing []string
}

// Error lists what is missing.
func (e *SchemaError) Error() string {
	return "exit database: not an exit dump of the app: missing " + strings.Join(e.Missing, ", ")
}

// ImportError reports the bad entries of an import batch, of which nothing
// was stored.
type ImportError struct {
	Entries []EntryError
}

// EntryError is one bad entry of a batch: its index in the batch and a
// sentence saying why. The reason never contains the identity or a secret.
type EntryError struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

// Error summarises the bad entries.
func (e *ImportError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "import: %d invalid identit", len(e.Entries))
	if len(e.Entries) == 1 {
		b.WriteString("y")
	} else {
		b.WriteString("ies")
	}
	for i, en := range e.Entries {
		if i == 5 {
			fmt.Fprintf(&b, "; and %d more", len(e.Entries)-i)
			break
		}
		fmt.Fprintf(&b, "; entry %d: %s", en.Index, en.Reason)
	}
	return b.String()
}

// KeyNotFoundError reports an ID whose key no imported identity opens; it
// unwraps to encryption.ErrKeyNotFound and carries CreatorUserID when the
// dump tells who created the resource (key_publishes.author ->
// devices.user_id).
type KeyNotFoundError = chain.KeyNotFoundError

// dbError wraps a database error for the operation: ErrUnavailable when the
// database cannot be reached, the context's error when the caller gave up,
// the error itself otherwise (a query the server rejected).
func dbError(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return fmt.Errorf("exit database: %s: %w", op, ctx.Err())
	}
	if !unavailable(err) {
		return fmt.Errorf("exit database: %s: %w", op, err)
	}
	return fmt.Errorf("exit database: %s: %w: %w", op, ErrUnavailable, err)
}

// unavailable tells a lost or refused connection (to retry later) from a
// query error. Server errors are unavailable only in the connection
// exception class (08) and the shutdown and overload codes.
func unavailable(err error) bool {
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case strings.HasPrefix(pg.Code, "08"),
			pg.Code == "57P01", pg.Code == "57P02", pg.Code == "57P03", // shutdowns, cannot connect now
			pg.Code == "53300": // too many connections
			return true
		}
		return false
	}
	var connect *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connect) || errors.As(err, &netErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) || pgconn.Timeout(err)
}
