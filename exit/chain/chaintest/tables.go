package chaintest

// Dump holds the rows of one app, in the order they were created, with
// the columns of exit/dump/FORMAT.md (trustchain_id and created_at are implied:
// the app and the position in the slice).
type Dump struct {
	AppID        []byte
	AppPublicKey []byte
	RootBlock    []byte

	Users                 []UserRow
	Devices               []DeviceRow
	Groups                []GroupRow
	Members               []MemberRow
	ProvisionalMembers    []ProvisionalMemberRow
	KeyPublishes          []KeyPublishRow
	Claims                []ClaimRow
	TankerProvisionalKeys []TankerKeyRow
}

// UserRow is a users row.
type UserRow struct {
	UserID                   []byte
	EncryptedVerificationKey []byte // nil for NULL
}

// DeviceRow is a devices row.
type DeviceRow struct {
	DeviceID                       []byte
	UserID                         []byte
	IsGhostDevice                  bool
	PublicSignatureKey             []byte
	PublicEncryptionKey            []byte
	UserPublicEncryptionKey        []byte
	SealedUserPrivateEncryptionKey []byte
	Block                          []byte
}

// GroupRow is a user_groups row.
type GroupRow struct {
	GroupID             []byte
	PublicEncryptionKey []byte
	Nature              int16
	Block               []byte
}

// MemberRow is a user_group_members row.
type MemberRow struct {
	GroupID                         []byte
	UserID                          []byte // nil for v1 groups
	UserPublicEncryptionKey         []byte
	SealedGroupPrivateEncryptionKey []byte
}

// ProvisionalMemberRow is a user_group_provisional_members row.
type ProvisionalMemberRow struct {
	GroupID                                 []byte
	AppPublicSignatureKey                   []byte
	TankerPublicSignatureKey                []byte
	TwoTimesSealedGroupPrivateEncryptionKey []byte
}

// KeyPublishRow is a key_publishes row.
type KeyPublishRow struct {
	ResourceID []byte
	Nature     int16
	Recipient  []byte
	SealedKey  []byte
	Author     []byte
	Block      []byte
}

// ClaimRow is a provisional_identity_claims row.
type ClaimRow struct {
	UserID                      []byte
	AppPublicSignatureKey       []byte
	TankerPublicSignatureKey    []byte
	UserPublicEncryptionKey     []byte
	SealedPrivateEncryptionKeys []byte
	Block                       []byte
}

// TankerKeyRow is a tanker_provisional_keys row.
type TankerKeyRow struct {
	Target                     string
	HashedValue                []byte
	AppPublicSignatureKey      []byte
	TankerPublicSignatureKey   []byte
	TankerPublicEncryptionKey  []byte
	TankerPrivateSignatureKey  []byte
	TankerPrivateEncryptionKey []byte
}
