package chain

import (
	"context"
	"errors"

	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
)

// ErrNotFound is returned by a Source when the row asked for does not exist.
var ErrNotFound = errors.New("not found")

// Source is what the chain reads: the dump's rows of one app and the
// material imported so far. Every method is scoped to that app by the
// implementation. Byte slices returned are not modified by the chain.
type Source interface {
	Dump
	Keyring
}

// Dump reads the dump's tables (exit/dump/FORMAT.md) of one app. The import
// lookups take a whole batch at once (one query each for a database) and
// return the rows found, in any order; rows carry the columns the chain
// matches them by.
type Dump interface {
	// Users returns the users rows of userIDs.
	Users(ctx context.Context, userIDs [][]byte) ([]User, error)
	// GhostDevices returns, for each i, the ghost device of userIDs[i]
	// whose public signature key is publicSignatureKeys[i], if any.
	GhostDevices(ctx context.Context, userIDs, publicSignatureKeys [][]byte) ([]Device, error)
	// Claims returns the provisional identity claims of userIDs.
	Claims(ctx context.Context, userIDs [][]byte) ([]Claim, error)
	// TankerProvisionalKeys returns the service-held halves whose app
	// public signature key is one of appPublicSignatureKeys.
	TankerProvisionalKeys(ctx context.Context, appPublicSignatureKeys [][]byte) ([]TankerProvisionalKey, error)
	// GroupMembers returns the user_group_members rows sealed to one of
	// userPublicKeys, with their group's public encryption key.
	GroupMembers(ctx context.Context, userPublicKeys [][]byte) ([]GroupMember, error)
	// GroupProvisionalMembers returns, for each i, the
	// user_group_provisional_members rows of the provisional identity
	// (appPublicSignatureKeys[i], tankerPublicSignatureKeys[i]), with their
	// group's public encryption key.
	GroupProvisionalMembers(ctx context.Context, appPublicSignatureKeys, tankerPublicSignatureKeys [][]byte) ([]GroupProvisionalMember, error)
	// KeyPublishes returns the key_publishes rows of a 16-byte ID, oldest
	// first.
	KeyPublishes(ctx context.Context, id encryption.SimpleID) ([]KeyPublish, error)
	// DeviceUser returns the user ID of a device, or ErrNotFound.
	DeviceUser(ctx context.Context, deviceID []byte) ([]byte, error)
}

// Keyring reads the imported material. A key that was not imported is
// reported as ErrNotFound.
type Keyring interface {
	// UserKey returns the imported user key pair whose public half is pub.
	UserKey(ctx context.Context, pub []byte) (keys.EncryptionKeyPair, error)
	// GroupKey returns the imported group key pair whose public half is pub.
	GroupKey(ctx context.Context, pub []byte) (keys.EncryptionKeyPair, error)
	// ProvisionalKey returns the imported provisional pair of a
	// provisional identity.
	ProvisionalKey(ctx context.Context, appPublicSignatureKey, tankerPublicSignatureKey []byte) (ProvisionalKeyPair, error)
	// UserImported reports whether the permanent identity of the hashed user ID userID was
	// imported.
	UserImported(ctx context.Context, userID []byte) (bool, error)
}

// User is a users row.
type User struct {
	UserID []byte
	// EncryptedVerificationKey is nil when the service keeps no
	// verification key for the user.
	EncryptedVerificationKey []byte
}

// Device is the part of a devices row the chain needs.
type Device struct {
	UserID                         []byte
	PublicSignatureKey             []byte
	DeviceID                       []byte
	PublicEncryptionKey            []byte
	UserPublicEncryptionKey        []byte // nil unless nature 7
	SealedUserPrivateEncryptionKey []byte // nil unless nature 7
}

// Claim is a provisional_identity_claims row.
type Claim struct {
	UserID                      []byte
	AppPublicSignatureKey       []byte
	TankerPublicSignatureKey    []byte
	UserPublicEncryptionKey     []byte
	SealedPrivateEncryptionKeys []byte
}

// TankerProvisionalKey is a tanker_provisional_keys row.
type TankerProvisionalKey struct {
	Target                     string // "email" or "phone_number"
	HashedValue                []byte
	AppPublicSignatureKey      []byte
	TankerPublicSignatureKey   []byte
	TankerPublicEncryptionKey  []byte
	TankerPrivateEncryptionKey []byte
}

// GroupMember is a user_group_members row with its group's public
// encryption key (from user_groups).
type GroupMember struct {
	GroupID                         []byte
	GroupPublicEncryptionKey        []byte
	UserPublicEncryptionKey         []byte
	SealedGroupPrivateEncryptionKey []byte
}

// GroupProvisionalMember is a user_group_provisional_members row with its
// group's public encryption key.
type GroupProvisionalMember struct {
	GroupID                                 []byte
	GroupPublicEncryptionKey                []byte
	AppPublicSignatureKey                   []byte
	TankerPublicSignatureKey                []byte
	TwoTimesSealedGroupPrivateEncryptionKey []byte
}

// KeyPublish is a key_publishes row.
type KeyPublish struct {
	// Nature is block.KeyPublishToUser, KeyPublishToUserGroup or
	// KeyPublishToProvisionalUser.
	Nature block.Nature
	// Recipient is the user or group public encryption key (natures 8,
	// 11) or app || tanker public signature keys (nature 13).
	Recipient []byte
	SealedKey []byte
	Author    []byte // device ID
}
