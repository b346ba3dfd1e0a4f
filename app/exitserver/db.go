package exitserver

import (
	"context"

	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
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
	// AuditKeys reports, for each 16-byte ID, whether a key published under it reaches
	// imported material and, when not, which users hold one (by hashed user ID), without
	// opening any key. Errors wrap exitdb.ErrUnavailable when the database does not answer.
	AuditKeys(ctx context.Context, ids []encryption.SimpleID) ([]exitdb.KeyAudit, error)
	// AppID is the 32-byte ID of the app whose dump the database holds.
	AppID() []byte
}

var _ DB = (*exitdb.DB)(nil)

// lookupContext bounds the database work of resolving keys (KeyLookupTimeout). It does not
// follow the request's context: a lookup a client stopped waiting for still fills the key
// cache, and a context of its own costs less than one tied to the request's.
func (s *Server) lookupContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), s.cfg.KeyLookupTimeout)
}
