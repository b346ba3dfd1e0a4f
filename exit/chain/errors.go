package chain

import (
	"encoding/base64"
	"fmt"

	"github.com/idvault/idvault/exit/encryption"
)

// InvalidIdentityError reports an identity that cannot be imported because
// of what it is or of what the dump holds for it. Reason is a sentence
// meant for the person who supplied the identity; it never contains the
// identity or any secret.
type InvalidIdentityError struct {
	Reason string
}

// Error returns the reason.
func (e *InvalidIdentityError) Error() string { return "invalid identity: " + e.Reason }

func invalid(format string, args ...any) error {
	return &InvalidIdentityError{Reason: fmt.Sprintf(format, args...)}
}

// KeyNotFoundError reports a 16-byte ID whose key no imported material
// opens. It unwraps to encryption.ErrKeyNotFound.
type KeyNotFoundError struct {
	// ID is the ID looked up.
	ID encryption.SimpleID
	// CreatorUserID is the hashed user ID of the user whose device
	// published a key under ID, when the dump tells it (nil otherwise).
	// Importing that user's identity decrypts the resource.
	CreatorUserID []byte
	// CreatorImported says the creator's identity is imported already: the
	// keys under ID were published to others only, and naming the creator
	// would not help.
	CreatorImported bool
	// Publishes is the number of key publishes found under ID.
	Publishes int
}

// Error names the ID and, when known, the creator's user ID.
func (e *KeyNotFoundError) Error() string {
	switch {
	case e.Publishes == 0:
		return fmt.Sprintf("no key published under %s", e.ID)
	case e.CreatorUserID != nil && e.CreatorImported:
		return fmt.Sprintf("no imported identity opens the %d key(s) published under %s; its creator, user %s, is imported but was not given them",
			e.Publishes, e.ID, base64.StdEncoding.EncodeToString(e.CreatorUserID))
	case e.CreatorUserID != nil:
		return fmt.Sprintf("no imported identity opens the %d key(s) published under %s; created by user %s",
			e.Publishes, e.ID, base64.StdEncoding.EncodeToString(e.CreatorUserID))
	default:
		return fmt.Sprintf("no imported identity opens the %d key(s) published under %s", e.Publishes, e.ID)
	}
}

// Unwrap returns encryption.ErrKeyNotFound.
func (e *KeyNotFoundError) Unwrap() error { return encryption.ErrKeyNotFound }

// Published reports whether keys were published under the ID (see
// encryption.KeyFinder).
func (e *KeyNotFoundError) Published() bool { return e.Publishes > 0 }
