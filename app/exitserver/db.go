package exitserver

import (
	"context"

	"idvault/exit/encryption"
	"idvault/exit/exitdb"
)

// DB is what the handlers need from the restored dump and the imported keys. *exitdb.DB (the
// PostgreSQL database) implements it; so does exitfake's in-memory stand-in for tests. Its
// errors are exitdb's: the handlers map them to the catalogue.
type DB interface {
	// Ping reports whether the database answers; an error wrapping exitdb.ErrUnavailable when
	// not.
	Ping(ctx context.Context) error
	// Import stores what decrypting needs for each private identity, all or nothing. Bad entries
	// are reported as *exitdb.ImportError; a database that does not answer as
	// exitdb.ErrUnavailable.
	Import(ctx context.Context, identities []string) (exitdb.ImportResult, error)
	// KeyFinder resolves 16-byte resource, session and seed IDs to keys. Its errors wrap
	// encryption.ErrKeyNotFound (as *exitdb.KeyNotFoundError when keys were published under
	// the ID) or exitdb.ErrUnavailable.
	KeyFinder(ctx context.Context) encryption.KeyFinder
}

var _ DB = (*exitdb.DB)(nil)
