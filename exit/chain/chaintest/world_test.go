package chaintest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/block"
)

// The World's blocks are valid Tanker blocks: they parse, their hashes
// are the IDs recorded, and group and claim signatures verify.
func TestWorldBlocks(t *testing.T) {
	t.Parallel()
	w := NewWorld(t)
	alice := w.User("alice", true)
	p := w.Provisional("p@example.com")
	w.Claim(alice, p)
	w.Group(alice, []*User{alice}, []*Provisional{p})
	w.Resource(0x0a, []byte("x"), alice, p)

	root, err := block.Parse(w.Dump.RootBlock)
	require.NoError(t, err)
	h := root.Hash()
	require.Equal(t, w.AppID, h[:])
	for _, d := range w.Dump.Devices {
		blk, err := block.Parse(d.Block)
		require.NoError(t, err)
		h := blk.Hash()
		require.Equal(t, d.DeviceID, h[:])
	}
	for _, g := range w.Dump.Groups {
		blk, err := block.Parse(g.Block)
		require.NoError(t, err)
		a, err := blk.Action()
		require.NoError(t, err)
		require.NoError(t, a.(*block.UserGroupCreationAction).VerifySelfSignature())
	}
	for _, c := range w.Dump.Claims {
		blk, err := block.Parse(c.Block)
		require.NoError(t, err)
		a, err := blk.Action()
		require.NoError(t, err)
		require.NoError(t, a.(*block.ProvisionalIdentityClaimAction).VerifyAuthorSignatures(blk.Author))
	}
	require.Len(t, w.Dump.KeyPublishes, 2)
}
