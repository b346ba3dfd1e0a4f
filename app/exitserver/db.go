package exitserver

import (
	"context"
	"errors"
	"fmt"

	"idvault/exit/encryption"
)

// DB is what the handlers need from the restored dump and the imported keys.
type DB interface {
	// Ping reports whether the database answers; an error wrapping ErrUnavailable when not.
	Ping(ctx context.Context) error
	// Import stores what decrypting needs for each private identity, all or nothing. Bad entries
	// are reported as *ImportError; a database that does not answer as ErrUnavailable.
	Import(ctx context.Context, identities []string) (ImportResult, error)
	// KeyFinder resolves 16-byte resource, session and seed IDs to keys. Its errors wrap
	// encryption.ErrKeyNotFound (as *KeyNotFoundError when the creator is known) or
	// ErrUnavailable.
	KeyFinder(ctx context.Context) encryption.KeyFinder
}

// ImportResult counts the identities of one import call.
type ImportResult struct {
	Imported        int `json:"imported"`
	AlreadyImported int `json:"already_imported"`
}

// ErrUnavailable is wrapped by errors of a database that does not answer (database_unavailable).
var ErrUnavailable = errors.New("database unavailable")

// ImportError lists every bad entry of a refused import (invalid_identity).
type ImportError struct {
	Entries []EntryError
}

// EntryError is one bad entry: its index in the request and why (never the identity itself).
type EntryError struct {
	Index  int    `json:"index"`
	Reason string `json:"reason"`
}

func (e *ImportError) Error() string {
	return fmt.Sprintf("import: %d bad identities", len(e.Entries))
}

// KeyNotFoundError is a missing key whose resource creator is known from the dump.
type KeyNotFoundError struct {
	// CreatorUserID is the hashed user ID (32 bytes) of the resource's creator, or nil.
	CreatorUserID []byte
	// Err is the underlying error; it wraps encryption.ErrKeyNotFound.
	Err error

	published bool
}

func (e *KeyNotFoundError) Error() string { return "key not found: " + e.Err.Error() }

// Published reports whether keys were published under the ID (encryption.ResolveKey then
// reports this lookup first).
func (e *KeyNotFoundError) Published() bool { return e.published || e.CreatorUserID != nil }

// Unwrap returns the underlying error (which wraps encryption.ErrKeyNotFound).
func (e *KeyNotFoundError) Unwrap() error { return e.Err }
