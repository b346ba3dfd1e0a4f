package block

// KeyPublishAction publishes a resource key sealed to a user key (nature
// 8) or to a group encryption key (nature 11).
type KeyPublishAction struct {
	// ToGroup selects nature 11 (KeyPublishToUserGroup) over 8.
	ToGroup bool
	// Recipient is the user or group public encryption key.
	Recipient  [PublicKeySize]byte
	ResourceID [ResourceIDSize]byte
	SealedKey  [SealedKeySize]byte
}

// Nature returns KeyPublishToUser or KeyPublishToUserGroup.
func (a *KeyPublishAction) Nature() Nature {
	if a.ToGroup {
		return KeyPublishToUserGroup
	}
	return KeyPublishToUser
}

// AppendPayload appends recipient, resource ID and sealed key.
func (a *KeyPublishAction) AppendPayload(dst []byte) []byte {
	dst = append(dst, a.Recipient[:]...)
	dst = append(dst, a.ResourceID[:]...)
	return append(dst, a.SealedKey[:]...)
}

func parseKeyPublish(r *reader, n Nature) *KeyPublishAction {
	a := &KeyPublishAction{ToGroup: n == KeyPublishToUserGroup}
	r.fixed(a.Recipient[:])
	r.fixed(a.ResourceID[:])
	r.fixed(a.SealedKey[:])
	return a
}

// KeyPublishToProvisionalUserAction publishes a resource key to a
// provisional identity (nature 13), sealed for the app half then the
// Tanker half.
type KeyPublishToProvisionalUserAction struct {
	AppPublicSignatureKey    [PublicKeySize]byte
	TankerPublicSignatureKey [PublicKeySize]byte
	ResourceID               [ResourceIDSize]byte
	TwoTimesSealedKey        [TwoTimesSealedKeySize]byte
}

// Nature returns KeyPublishToProvisionalUser.
func (*KeyPublishToProvisionalUserAction) Nature() Nature { return KeyPublishToProvisionalUser }

// AppendPayload appends the fields in order.
func (a *KeyPublishToProvisionalUserAction) AppendPayload(dst []byte) []byte {
	dst = append(dst, a.AppPublicSignatureKey[:]...)
	dst = append(dst, a.TankerPublicSignatureKey[:]...)
	dst = append(dst, a.ResourceID[:]...)
	return append(dst, a.TwoTimesSealedKey[:]...)
}

func parseKeyPublishToProvisionalUser(r *reader) *KeyPublishToProvisionalUserAction {
	a := &KeyPublishToProvisionalUserAction{}
	r.fixed(a.AppPublicSignatureKey[:])
	r.fixed(a.TankerPublicSignatureKey[:])
	r.fixed(a.ResourceID[:])
	r.fixed(a.TwoTimesSealedKey[:])
	return a
}

// ProvisionalIdentityClaimAction attaches a provisional identity to a user
// (nature 14).
type ProvisionalIdentityClaimAction struct {
	UserID                      [UserIDSize]byte
	AppPublicSignatureKey       [PublicKeySize]byte
	TankerPublicSignatureKey    [PublicKeySize]byte
	AuthorSignatureByAppKey     [SignatureSize]byte
	AuthorSignatureByTankerKey  [SignatureSize]byte
	UserPublicEncryptionKey     [PublicKeySize]byte
	SealedPrivateEncryptionKeys [SealedClaimKeysSize]byte
}

// Nature returns ProvisionalIdentityClaim.
func (*ProvisionalIdentityClaimAction) Nature() Nature { return ProvisionalIdentityClaim }

// AppendPayload appends the fields in order.
func (a *ProvisionalIdentityClaimAction) AppendPayload(dst []byte) []byte {
	dst = append(dst, a.UserID[:]...)
	dst = append(dst, a.AppPublicSignatureKey[:]...)
	dst = append(dst, a.TankerPublicSignatureKey[:]...)
	dst = append(dst, a.AuthorSignatureByAppKey[:]...)
	dst = append(dst, a.AuthorSignatureByTankerKey[:]...)
	dst = append(dst, a.UserPublicEncryptionKey[:]...)
	return append(dst, a.SealedPrivateEncryptionKeys[:]...)
}

func parseProvisionalIdentityClaim(r *reader) *ProvisionalIdentityClaimAction {
	a := &ProvisionalIdentityClaimAction{}
	r.fixed(a.UserID[:])
	r.fixed(a.AppPublicSignatureKey[:])
	r.fixed(a.TankerPublicSignatureKey[:])
	r.fixed(a.AuthorSignatureByAppKey[:])
	r.fixed(a.AuthorSignatureByTankerKey[:])
	r.fixed(a.UserPublicEncryptionKey[:])
	r.fixed(a.SealedPrivateEncryptionKeys[:])
	return a
}
