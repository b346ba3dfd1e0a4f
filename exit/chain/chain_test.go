package chain_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/chain"
	"github.com/idvault/idvault/exit/chain/chaintest"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
)

// env is a World served by a MemSource, with the chain over it.
type env struct {
	*chaintest.World
	t     *testing.T
	src   *chaintest.MemSource
	chain *chain.Chain
}

func newEnv(t *testing.T) *env {
	w := chaintest.NewWorld(t)
	src := chaintest.NewMemSource(&w.Dump)
	c, err := chain.New(w.AppID, w.AppSecret[32:], src)
	require.NoError(t, err)
	return &env{World: w, t: t, src: src, chain: c}
}

// importOK imports an identity and stores its material.
func (e *env) importOK(s string) *chain.Material {
	m, err := e.chain.Import(e.t.Context(), s)
	require.NoError(e.t, err)
	e.src.Store(m)
	return m
}

func (e *env) decrypt(enc []byte) ([]byte, error) {
	out, _, err := encryption.Decrypt(e.chain.KeyFinder(e.t.Context()), enc)
	return out, err
}

func TestPermanentUserKey(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	bob := e.User("bob", true)
	for _, v := range []encryption.Version{encryption.V2, encryption.V5, encryption.V10, encryption.V11} {
		enc := e.Resource(v, []byte("alice's "+v.String()), alice, bob)
		_, err := e.decrypt(enc)
		var nf *chain.KeyNotFoundError
		require.ErrorAs(t, err, &nf, "nothing imported yet")
		require.Equal(t, alice.UserID, nf.CreatorUserID, "the creator is named")
		require.Contains(t, err.Error(), base64.StdEncoding.EncodeToString(alice.UserID))
	}

	m := e.importOK(bob.Identity)
	require.Equal(t, chain.Permanent, m.Kind)
	require.Equal(t, bob.UserID, m.ID)
	require.Equal(t, []keys.EncryptionKeyPair{bob.UserKey}, m.UserKeys)
	enc := e.Resource(encryption.V10, []byte("shared with bob"), alice, bob)
	got, err := e.decrypt(enc)
	require.NoError(t, err)
	require.Equal(t, "shared with bob", string(got))

	// Not shared with bob: still not found, creator named.
	enc = e.Resource(encryption.V10, []byte("alice only"), alice)
	_, err = e.decrypt(enc)
	var nf *chain.KeyNotFoundError
	require.ErrorAs(t, err, &nf)
	require.Equal(t, alice.UserID, nf.CreatorUserID)
	require.False(t, nf.CreatorImported, "alice is not imported: importing her helps")
	require.Equal(t, 1, nf.Publishes)
}

// The creator of a resource is named as the identity to import only while that identity is not
// imported: once it is, a key still not found was given to others only, and the error says so.
func TestKeyNotFoundNamesTheCreatorOnlyWhenNotImported(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	bob := e.User("bob", true)
	key := make([]byte, encryption.KeySize)
	enc, rid, err := encryption.Encrypt(encryption.V3, key, []byte("for bob only"), encryption.EncryptOptions{})
	require.NoError(t, err)
	e.Publish(rid.ID, key, alice, bob) // authored by alice, not published to her

	_, err = e.decrypt(enc)
	var nf *chain.KeyNotFoundError
	require.ErrorAs(t, err, &nf)
	require.Equal(t, alice.UserID, nf.CreatorUserID)
	require.False(t, nf.CreatorImported)

	e.importOK(alice.Identity)
	_, err = e.decrypt(enc)
	require.ErrorAs(t, err, &nf)
	require.Equal(t, alice.UserID, nf.CreatorUserID)
	require.True(t, nf.CreatorImported)
	require.Contains(t, err.Error(), "is imported but was not given them")

	e.importOK(bob.Identity)
	got, err := e.decrypt(enc)
	require.NoError(t, err)
	require.Equal(t, "for bob only", string(got))
}

func TestGroupsAndProvisional(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	bob := e.User("bob", true)
	carol := e.User("carol", true)
	claimed := e.Provisional("claimed@example.com")
	e.Claim(carol, claimed)
	unclaimed := e.Provisional("unclaimed@example.com")
	g := e.Group(alice, []*chaintest.User{bob}, []*chaintest.Provisional{claimed, unclaimed})
	g2 := e.Group(alice, []*chaintest.User{carol}, nil)

	toGroup := e.Resource(encryption.V9, []byte("to the group"), alice, g)
	toGroup2 := e.Resource(encryption.V4, []byte("to the second group"), alice, g2)
	toClaimed := e.Resource(encryption.V7, []byte("to the claimed provisional"), alice, claimed)
	toUnclaimed := e.Resource(encryption.V3, []byte("to the unclaimed provisional"), alice, unclaimed)

	// Bob reaches the group through its member row, checked against the
	// group public key.
	m := e.importOK(bob.Identity)
	require.Equal(t, []keys.EncryptionKeyPair{g.Key}, m.GroupKeys)
	got, err := e.decrypt(toGroup)
	require.NoError(t, err)
	require.Equal(t, "to the group", string(got))
	_, err = e.decrypt(toClaimed)
	require.ErrorIs(t, err, encryption.ErrKeyNotFound)

	// Carol's claim gives the claimed pair, which opens nature 13 and the
	// group's provisional member entry; her own membership gives g2.
	m = e.importOK(carol.Identity)
	require.Len(t, m.ProvisionalKeys, 1)
	require.Equal(t, claimed.App, m.ProvisionalKeys[0].App)
	require.Equal(t, claimed.Tanker, m.ProvisionalKeys[0].Tanker)
	require.ElementsMatch(t, []keys.EncryptionKeyPair{g.Key, g2.Key}, m.GroupKeys)
	for _, tc := range []struct {
		enc  []byte
		want string
	}{{toClaimed, "to the claimed provisional"}, {toGroup2, "to the second group"}} {
		got, err := e.decrypt(tc.enc)
		require.NoError(t, err)
		require.Equal(t, tc.want, string(got))
	}
	_, err = e.decrypt(toUnclaimed)
	require.ErrorIs(t, err, encryption.ErrKeyNotFound)

	// The never-claimed identity: app half from the identity, tanker half
	// from tanker_provisional_keys.
	m = e.importOK(unclaimed.Identity)
	require.Equal(t, chain.Provisional, m.Kind)
	require.Equal(t, []byte(unclaimed.Parsed.PublicSignatureKey), m.ID)
	require.Len(t, m.ProvisionalKeys, 1)
	require.Equal(t, []keys.EncryptionKeyPair{g.Key}, m.GroupKeys, "member of g as a provisional identity")
	got, err = e.decrypt(toUnclaimed)
	require.NoError(t, err)
	require.Equal(t, "to the unclaimed provisional", string(got))
}

// Only the group provisional member row reaches g: importing the
// unclaimed identity alone decrypts what was shared with the group.
func TestGroupThroughProvisionalMemberOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	p := e.Provisional("member@example.com")
	g := e.Group(alice, nil, []*chaintest.Provisional{p})
	enc := e.Resource(encryption.V11, bytes.Repeat([]byte("g"), 3000), alice, g)
	e.importOK(p.Identity)
	got, err := e.decrypt(enc)
	require.NoError(t, err)
	require.Len(t, got, 3000)
}

// A resource shared alone is published under its seed with the data key.
func TestKeyPublishedUnderSeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	bob := e.User("bob", true)
	session := make([]byte, 32)
	enc, rid, err := encryption.Encrypt(encryption.V10, session, []byte("one of a session"), encryption.EncryptOptions{})
	require.NoError(t, err)
	e.Publish(rid.ID, session, alice, alice)
	sub, err := encryption.DeriveSubkey(session, rid.Seed)
	require.NoError(t, err)
	e.Publish(rid.Seed, sub, alice, bob)
	e.importOK(bob.Identity)
	got, err := e.decrypt(enc)
	require.NoError(t, err)
	require.Equal(t, "one of a session", string(got))
}

// reorder rewrites an identity's JSON with its keys in another order, as
// other Tanker libraries (or old ones) write them.
func reorder(t *testing.T, s string, cmp func(a, b string) int) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(raw, &m))
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.SortFunc(names, cmp)
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		kj, _ := json.Marshal(k)
		vj, _ := json.Marshal(m[k])
		b.Write(kj)
		b.WriteByte(':')
		b.Write(vj)
	}
	b.WriteByte('}')
	return base64.StdEncoding.EncodeToString([]byte(b.String()))
}

func TestAnyFieldOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	p := e.Provisional("order@example.com")
	orders := map[string]func(a, b string) int{
		"alphabetical": strings.Compare,
		"reversed":     func(a, b string) int { return strings.Compare(b, a) },
	}
	for name, cmp := range orders {
		for _, s := range []string{alice.Identity, p.Identity} {
			re := reorder(t, s, cmp)
			require.NotEqual(t, s, re)
			_, err := e.chain.Import(t.Context(), re)
			require.NoError(t, err, name)
		}
	}
}

func TestImportFailures(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	noVK := e.User("no verification key", true)
	e.SetVerificationKey(noVK, nil)
	// The stored verification key is another user's ghost device's.
	mismatch := e.User("mismatching verification key", true)
	other := e.User("other", true)
	enc, err := keys.EncryptVerificationKey(other.VK, mismatch.Secret, nil)
	require.NoError(t, err)
	e.SetVerificationKey(mismatch, enc)
	// Encrypted under another user secret.
	wrongSecret := e.User("wrong secret", true)
	enc, err = keys.EncryptVerificationKey(wrongSecret.VK, other.Secret, nil)
	require.NoError(t, err)
	e.SetVerificationKey(wrongSecret, enc)

	// The ghost device's signature key but another encryption key.
	half := e.User("half verification key", true)
	halfVK := half.VK
	halfVK.PrivateEncryptionKey = other.VK.PrivateEncryptionKey
	enc, err = keys.EncryptVerificationKey(halfVK, half.Secret, nil)
	require.NoError(t, err)
	e.SetVerificationKey(half, enc)

	stranger, err := identity.CreatePermanent(e.AppID, e.AppSecret, "never registered")
	require.NoError(t, err)
	otherApp := chaintest.NewWorld(t).User("alice", true)
	public, err := identity.PublicIdentity(alice.Identity)
	require.NoError(t, err)
	prov := e.Provisional("p@example.com")
	provPublic, err := identity.PublicIdentity(prov.Identity)
	require.NoError(t, err)

	// A group whose recorded public key is not the sealed key's.
	bob := e.User("bob", true)
	e.Group(alice, []*chaintest.User{bob}, nil)
	wrong := e.EncKey()
	e.Dump.Groups[len(e.Dump.Groups)-1].PublicEncryptionKey = wrong.Public[:]

	tests := []struct {
		name     string
		identity string
		reason   string
	}{
		{"not base64", "not an identity!", "not a Tanker identity"},
		{"not json", base64.StdEncoding.EncodeToString([]byte("[1,2]")), "not a Tanker identity"},
		{"public permanent", public, "a public identity"},
		{"public provisional", provPublic, "not a private identity"},
		{"other app", otherApp.Identity, "another app"},
		{"user not in the dump", stranger, "not in the dump"},
		{"no verification key", noVK.Identity, "no verification key"},
		{"mismatching verification key", mismatch.Identity, "matches no ghost device"},
		{"verification key with another encryption key", half.Identity, "does not open with the verification key"},
		{"verification key of another secret", wrongSecret.Identity, "does not decrypt with the identity's user secret"},
		{"group key mismatch", bob.Identity, "does not open or does not match the group's public key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := e.chain.Import(t.Context(), tc.identity)
			require.Nil(t, m)
			var inv *chain.InvalidIdentityError
			require.ErrorAs(t, err, &inv)
			require.Contains(t, inv.Reason, tc.reason)
			require.NotContains(t, inv.Reason, tc.identity)
		})
	}
}

// failing is a Source whose user and key publish reads fail.
type failing struct {
	*chaintest.MemSource
	err error
}

func (f failing) Users(context.Context, [][]byte) ([]chain.User, error) { return nil, f.err }
func (f failing) KeyPublishes(context.Context, encryption.SimpleID) ([]chain.KeyPublish, error) {
	return nil, f.err
}

// A Source failure is not an entry error, and is kept in the chain.
func TestSourceErrors(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	boom := errors.New("database down")
	c, err := chain.New(e.AppID, e.AppSecret[32:], failing{e.src, boom})
	require.NoError(t, err)
	_, err = c.Import(t.Context(), alice.Identity)
	require.ErrorIs(t, err, boom)
	var inv *chain.InvalidIdentityError
	require.False(t, errors.As(err, &inv))
	_, err = c.FindKey(t.Context(), encryption.SimpleID{1})
	require.ErrorIs(t, err, boom)
	require.NotErrorIs(t, err, encryption.ErrKeyNotFound)
}

// Material never prints its keys.
func TestMaterialRedacted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	alice := e.User("alice", true)
	m := e.importOK(alice.Identity)
	for _, s := range []string{m.String(), m.GoString()} {
		require.NotContains(t, s, base64.StdEncoding.EncodeToString(alice.UserKey.Private[:]))
		require.Contains(t, s, "redacted")
	}
}

// counting counts the Source's import lookups.
type counting struct {
	*chaintest.MemSource
	users, devices int
}

func (c *counting) Users(ctx context.Context, ids [][]byte) ([]chain.User, error) {
	c.users++
	return c.MemSource.Users(ctx, ids)
}

func (c *counting) GhostDevices(ctx context.Context, ids, sigs [][]byte) ([]chain.Device, error) {
	c.devices++
	return c.MemSource.GhostDevices(ctx, ids, sigs)
}

// A batch is read with one lookup per step, and each entry gets its own
// result, in order.
func TestImportBatch(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var batch []string
	var users []*chaintest.User
	for i := range 12 {
		u := e.User(strings.Repeat("x", i+1), true)
		users = append(users, u)
		batch = append(batch, u.Identity)
	}
	p := e.Provisional("batch@example.com")
	batch = append(batch, "garbage", p.Identity)
	src := &counting{MemSource: e.src}
	c, err := chain.New(e.AppID, e.AppSecret[32:], src)
	require.NoError(t, err)
	ms, errs, err := c.ImportBatch(t.Context(), batch)
	require.NoError(t, err)
	require.Equal(t, 1, src.users)
	require.Equal(t, 1, src.devices)
	for i, u := range users {
		require.NoError(t, errs[i])
		require.Equal(t, u.UserID, ms[i].ID)
		require.Equal(t, u.UserKey, ms[i].UserKeys[0])
	}
	require.Nil(t, ms[12])
	var inv *chain.InvalidIdentityError
	require.ErrorAs(t, errs[12], &inv)
	require.NoError(t, errs[13])
	require.Equal(t, chain.Provisional, ms[13].Kind)
}
