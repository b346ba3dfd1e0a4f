package block_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/block"
)

func TestGroupSelfSignatureCoversEveryMemberField(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	for _, version := range []int{1, 2, 3} {
		c := &block.UserGroupCreationAction{Version: version}
		copy(c.PublicSignatureKey[:], pub)
		c.Members = []block.GroupMember{{UserID: [32]byte{1}, UserPublicEncryptionKey: [32]byte{2}}}
		if version >= 2 {
			c.ProvisionalMembers = []block.GroupProvisionalMember{{AppPublicEncryptionKey: [32]byte{3}}}
		}
		c.SelfSign(priv)
		require.NoError(t, c.VerifySelfSignature())

		// The signature survives serialization and parsing.
		parsed, err := block.ParsePayload(c.Nature(), c.AppendPayload(nil))
		require.NoError(t, err)
		require.NoError(t, parsed.(*block.UserGroupCreationAction).VerifySelfSignature())

		c.Members[0].SealedPrivateEncryptionKey[5] ^= 1
		require.ErrorIs(t, c.VerifySelfSignature(), block.ErrInvalidSignature, "v%d: a changed member key still verifies", version)

		a := &block.UserGroupAdditionAction{Version: version, GroupID: c.PublicSignatureKey, Members: c.Members, ProvisionalMembers: c.ProvisionalMembers}
		a.SelfSign(priv)
		require.NoError(t, a.VerifySelfSignature())
		a.PreviousGroupBlockHash[0] ^= 1
		require.ErrorIs(t, a.VerifySelfSignature(), block.ErrInvalidSignature)
	}
}

func TestGroupSelfSignatureDataOmitsListCounts(t *testing.T) {
	c := &block.UserGroupCreationAction{Version: 2, Members: make([]block.GroupMember, 2)}
	payload := c.AppendPayload(nil)
	// payload = fixed fields, count, members, count, provisional, self signature (64).
	require.Len(t, c.SignatureData(), len(payload)-2-64)
}

func TestClaimAuthorSignatures(t *testing.T) {
	appPub, appPriv, _ := ed25519.GenerateKey(rand.Reader)
	tkPub, tkPriv, _ := ed25519.GenerateKey(rand.Reader)
	c := &block.ProvisionalIdentityClaimAction{}
	copy(c.AppPublicSignatureKey[:], appPub)
	copy(c.TankerPublicSignatureKey[:], tkPub)
	author := block.Hash{9}
	c.SignAuthor(author, appPriv, tkPriv)
	require.NoError(t, c.VerifyAuthorSignatures(author))
	require.ErrorIs(t, c.VerifyAuthorSignatures(block.Hash{8}), block.ErrInvalidSignature, "signature bound to another author verifies")
	c.AuthorSignatureByTankerKey[0] ^= 1
	require.ErrorIs(t, c.VerifyAuthorSignatures(author), block.ErrInvalidSignature)
}
