package chain

import (
	"github.com/idvault/idvault/exit/keys"
)

// Kind tells a permanent identity from a provisional one.
type Kind int

// Kinds of imported identities.
const (
	Permanent Kind = iota + 1
	Provisional
)

// String returns "permanent" or "provisional".
func (k Kind) String() string {
	if k == Provisional {
		return "provisional"
	}
	return "permanent"
}

// Material is what importing one identity yields: the key pairs that
// decrypting needs. It holds private keys: never log it.
type Material struct {
	// Kind and ID identify the identity: the hashed user ID of a permanent
	// identity, the app public signature key of a provisional one.
	Kind Kind
	ID   []byte
	// UserKeys holds the user's key pair (permanent identities).
	UserKeys []keys.EncryptionKeyPair
	// ProvisionalKeys holds the pairs from the user's claims, or the
	// provisional identity's own pair when the service holds its half.
	ProvisionalKeys []ProvisionalKeyPair
	// GroupKeys holds the private keys of the groups the user or the
	// provisional identities are members of.
	GroupKeys []keys.EncryptionKeyPair
}

// ProvisionalKeyPair is the two halves of a provisional identity's
// encryption keys, named by its two public signature keys.
type ProvisionalKeyPair struct {
	AppPublicSignatureKey    [keys.KeySize]byte
	TankerPublicSignatureKey [keys.KeySize]byte
	App                      keys.EncryptionKeyPair
	Tanker                   keys.EncryptionKeyPair
}

// String describes the material without its private keys.
func (m Material) String() string {
	return m.Kind.String() + " identity material (secrets redacted)"
}

// GoString is String, so that %#v does not print secrets either.
func (m Material) GoString() string { return m.String() }
