package block

import (
	"crypto/ed25519"
	"fmt"
)

// Group blocks carry a self signature: Ed25519 by the group's private signature key over the
// payload fields before it, with the member lists written without their varint counts
// (sdk-native UserGroupCreation*/UserGroupAddition* signatureData). A provisional identity claim
// carries two author signatures, by the app and the Tanker provisional signature keys, over
// author device ID || app public signature key || Tanker public signature key.

// SignatureData returns the bytes the group self signature covers.
func (a *UserGroupCreationAction) SignatureData() []byte {
	dst := make([]byte, 0, 2*PublicKeySize+SealedSignatureKeySize+len(a.Members)*memberV2Size+len(a.ProvisionalMembers)*provisionalMemberV3Size)
	dst = append(dst, a.PublicSignatureKey[:]...)
	dst = append(dst, a.PublicEncryptionKey[:]...)
	dst = append(dst, a.SealedPrivateSignatureKey[:]...)
	return appendMemberEntries(dst, a.Version, a.Members, a.ProvisionalMembers)
}

// SelfSign sets SelfSignature with the group's private signature key. Call it once the
// members are final and before New, since the self signature is part of the payload.
func (a *UserGroupCreationAction) SelfSign(groupPrivate ed25519.PrivateKey) {
	copy(a.SelfSignature[:], ed25519.Sign(groupPrivate, a.SignatureData()))
}

// VerifySelfSignature checks the self signature with the group's public signature key,
// which for a creation is a.PublicSignatureKey.
func (a *UserGroupCreationAction) VerifySelfSignature() error {
	if !ed25519.Verify(a.PublicSignatureKey[:], a.SignatureData(), a.SelfSignature[:]) {
		return fmt.Errorf("verify %s self signature: %w", a.Nature(), ErrInvalidSignature)
	}
	return nil
}

// SignatureData returns the bytes the group self signature covers.
func (a *UserGroupAdditionAction) SignatureData() []byte {
	dst := make([]byte, 0, PublicKeySize+HashSize+len(a.Members)*memberV2Size+len(a.ProvisionalMembers)*provisionalMemberV3Size)
	dst = append(dst, a.GroupID[:]...)
	dst = append(dst, a.PreviousGroupBlockHash[:]...)
	return appendMemberEntries(dst, a.Version, a.Members, a.ProvisionalMembers)
}

// SelfSign sets SelfSignature with the group's private signature key.
func (a *UserGroupAdditionAction) SelfSign(groupPrivate ed25519.PrivateKey) {
	copy(a.SelfSignature[:], ed25519.Sign(groupPrivate, a.SignatureData()))
}

// VerifySelfSignature checks the self signature with the group's public signature key,
// which is the group ID.
func (a *UserGroupAdditionAction) VerifySelfSignature() error {
	if !ed25519.Verify(a.GroupID[:], a.SignatureData(), a.SelfSignature[:]) {
		return fmt.Errorf("verify %s self signature: %w", a.Nature(), ErrInvalidSignature)
	}
	return nil
}

// appendMemberEntries appends the member entries of a group block as the self signature
// covers them: the lists of appendMembers without their counts.
func appendMemberEntries(dst []byte, version int, members []GroupMember, provisional []GroupProvisionalMember) []byte {
	return appendMemberLists(dst, version, members, provisional, false)
}

// SignatureData returns what the claim's two author signatures cover: the author device ID
// (the block's author) || app public signature key || Tanker public signature key.
func (a *ProvisionalIdentityClaimAction) SignatureData(author Hash) []byte {
	dst := make([]byte, 0, HashSize+2*PublicKeySize)
	dst = append(dst, author[:]...)
	dst = append(dst, a.AppPublicSignatureKey[:]...)
	return append(dst, a.TankerPublicSignatureKey[:]...)
}

// SignAuthor sets both author signatures for the claim block authored by author. The
// public signature keys must be set first.
func (a *ProvisionalIdentityClaimAction) SignAuthor(author Hash, appPrivate, tankerPrivate ed25519.PrivateKey) {
	data := a.SignatureData(author)
	copy(a.AuthorSignatureByAppKey[:], ed25519.Sign(appPrivate, data))
	copy(a.AuthorSignatureByTankerKey[:], ed25519.Sign(tankerPrivate, data))
}

// VerifyAuthorSignatures checks both author signatures against the claim's public
// signature keys for the block authored by author.
func (a *ProvisionalIdentityClaimAction) VerifyAuthorSignatures(author Hash) error {
	data := a.SignatureData(author)
	if !ed25519.Verify(a.AppPublicSignatureKey[:], data, a.AuthorSignatureByAppKey[:]) {
		return fmt.Errorf("verify claim signature by app key: %w", ErrInvalidSignature)
	}
	if !ed25519.Verify(a.TankerPublicSignatureKey[:], data, a.AuthorSignatureByTankerKey[:]) {
		return fmt.Errorf("verify claim signature by tanker key: %w", ErrInvalidSignature)
	}
	return nil
}
