package chain

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"idvault/app/identity"
	"idvault/exit/encryption"
	"idvault/exit/keys"
)

func decrypt(t *testing.T, c *Chain, enc []byte) ([]byte, error) {
	t.Helper()
	out, _, err := encryption.Decrypt(c.KeyFinder(t.Context()), enc)
	return out, err
}

func TestPermanentUserKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice := w.user("alice", true)
	bob := w.user("bob", true)
	for _, v := range []encryption.Version{encryption.V2, encryption.V5, encryption.V10, encryption.V11} {
		enc := w.resource(v, []byte("alice's "+v.String()), alice, bob)
		_, err := decrypt(t, w.chain, enc)
		var nf *KeyNotFoundError
		require.ErrorAs(t, err, &nf, "nothing imported yet")
		require.Equal(t, alice.userID, nf.CreatorUserID, "the creator is named")
		require.Contains(t, err.Error(), base64.StdEncoding.EncodeToString(alice.userID))
	}

	m := w.importOK(bob.identity)
	require.Equal(t, Permanent, m.Kind)
	require.Equal(t, bob.userID, m.ID)
	require.Len(t, m.UserKeys, 1)
	require.Equal(t, bob.userKey, m.UserKeys[0])
	enc := w.resource(encryption.V10, []byte("shared with bob"), alice, bob)
	got, err := decrypt(t, w.chain, enc)
	require.NoError(t, err)
	require.Equal(t, "shared with bob", string(got))

	// Not shared with bob: still not found, creator named.
	enc = w.resource(encryption.V10, []byte("alice only"), alice)
	_, err = decrypt(t, w.chain, enc)
	var nf *KeyNotFoundError
	require.ErrorAs(t, err, &nf)
	require.Equal(t, alice.userID, nf.CreatorUserID)
	require.Equal(t, 1, nf.Publishes)
}

func TestGroupsAndProvisional(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice := w.user("alice", true)
	bob := w.user("bob", true)
	carol := w.user("carol", true)
	claimed := w.provisional("claimed@example.com")
	w.claim(carol, claimed)
	unclaimed := w.provisional("unclaimed@example.com")
	g := w.group([]*worldUser{bob}, []*worldProvisional{claimed, unclaimed})
	g2 := w.group([]*worldUser{carol}, nil)

	toGroup := w.resource(encryption.V9, []byte("to the group"), alice, g)
	toGroup2 := w.resource(encryption.V4, []byte("to the second group"), alice, g2)
	toClaimed := w.resource(encryption.V7, []byte("to the claimed provisional"), alice, claimed)
	toUnclaimed := w.resource(encryption.V3, []byte("to the unclaimed provisional"), alice, unclaimed)

	// Bob reaches the group through its member row, checked against the
	// group public key.
	m := w.importOK(bob.identity)
	require.Len(t, m.GroupKeys, 1)
	require.Equal(t, g.key, m.GroupKeys[0])
	got, err := decrypt(t, w.chain, toGroup)
	require.NoError(t, err)
	require.Equal(t, "to the group", string(got))
	_, err = decrypt(t, w.chain, toClaimed)
	require.ErrorIs(t, err, encryption.ErrKeyNotFound)

	// Carol's claim gives the claimed pair, which opens nature 13 and the
	// group's provisional member entry; her own membership gives g2.
	m = w.importOK(carol.identity)
	require.Len(t, m.ProvisionalKeys, 1)
	require.Equal(t, claimed.app, m.ProvisionalKeys[0].App)
	require.Equal(t, claimed.tanker, m.ProvisionalKeys[0].Tanker)
	require.Len(t, m.GroupKeys, 2)
	for enc, want := range map[string]string{string(toClaimed): "to the claimed provisional", string(toGroup2): "to the second group"} {
		got, err := decrypt(t, w.chain, []byte(enc))
		require.NoError(t, err)
		require.Equal(t, want, string(got))
	}
	_, err = decrypt(t, w.chain, toUnclaimed)
	require.ErrorIs(t, err, encryption.ErrKeyNotFound)

	// The never-claimed identity: app half from the identity, tanker half
	// from tanker_provisional_keys.
	m = w.importOK(unclaimed.identity)
	require.Equal(t, Provisional, m.Kind)
	require.Equal(t, []byte(unclaimed.parsed.PublicSignatureKey), m.ID)
	require.Len(t, m.ProvisionalKeys, 1)
	require.Len(t, m.GroupKeys, 1, "member of g as a provisional identity")
	got, err = decrypt(t, w.chain, toUnclaimed)
	require.NoError(t, err)
	require.Equal(t, "to the unclaimed provisional", string(got))
}

// Only the group provisional member row reaches g: importing the
// unclaimed identity alone decrypts what was shared with the group.
func TestGroupThroughProvisionalMemberOnly(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice := w.user("alice", true)
	p := w.provisional("member@example.com")
	g := w.group(nil, []*worldProvisional{p})
	enc := w.resource(encryption.V11, bytes.Repeat([]byte("g"), 3000), alice, g)
	w.importOK(p.identity)
	got, err := decrypt(t, w.chain, enc)
	require.NoError(t, err)
	require.Len(t, got, 3000)
}

// A resource shared alone is published under its seed with the data key.
func TestKeyPublishedUnderSeed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice := w.user("alice", true)
	bob := w.user("bob", true)
	session := make([]byte, 32)
	enc, rid, err := encryption.Encrypt(encryption.V10, session, []byte("one of a session"), encryption.EncryptOptions{})
	require.NoError(t, err)
	w.publish(rid.ID, session, alice.deviceID, alice)
	sub, err := encryption.DeriveSubkey(session, rid.Seed)
	require.NoError(t, err)
	w.publish(rid.Seed, sub, alice.deviceID, bob)
	w.importOK(bob.identity)
	got, err := decrypt(t, w.chain, enc)
	require.NoError(t, err)
	require.Equal(t, "one of a session", string(got))
}

// reorder rewrites an identity's JSON with its keys in another order, as
// other Tanker libraries (or old ones) write them.
func reorder(t *testing.T, s string, less func(a, b string) int) string {
	t.Helper()
	raw, err := base64.StdEncoding.DecodeString(s)
	require.NoError(t, err)
	var m map[string]string
	require.NoError(t, json.Unmarshal(raw, &m))
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	slices.SortFunc(names, less)
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
	w := newWorld(t)
	alice := w.user("alice", true)
	p := w.provisional("order@example.com")
	orders := map[string]func(a, b string) int{
		"alphabetical": strings.Compare,
		"reversed":     func(a, b string) int { return strings.Compare(b, a) },
	}
	for name, less := range orders {
		for _, s := range []string{alice.identity, p.identity} {
			re := reorder(t, s, less)
			require.NotEqual(t, s, re)
			_, err := w.chain.Import(t.Context(), re)
			require.NoError(t, err, name)
		}
	}
}

func TestImportFailures(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice := w.user("alice", true)
	noVK := w.user("no verification key", true)
	w.src.users[string(noVK.userID)] = User{UserID: noVK.userID}
	mismatch := w.user("mismatching verification key", true)
	// The stored verification key is another ghost device's.
	p, err := identity.ParsePermanent(mismatch.identity, w.appID, w.appSecret[32:])
	require.NoError(t, err)
	other := w.user("other", true)
	enc, err := keys.EncryptVerificationKey(other.vk, p.UserSecret, nil)
	require.NoError(t, err)
	w.src.users[string(mismatch.userID)] = User{UserID: mismatch.userID, EncryptedVerificationKey: enc}

	stranger, err := identity.CreatePermanent(w.appID, w.appSecret, "never registered")
	require.NoError(t, err)
	otherApp := newWorld(t).user("alice", true)
	public, err := identity.PublicIdentity(alice.identity)
	require.NoError(t, err)
	prov := w.provisional("p@example.com")
	provPublic, err := identity.PublicIdentity(prov.identity)
	require.NoError(t, err)

	// A group whose sealed key is not the group's private key.
	bob := w.user("bob", true)
	g := w.group([]*worldUser{bob}, nil)
	wrong := w.encKey()
	w.src.groups[string(g.id)] = wrong.Public[:]

	tests := []struct {
		name     string
		identity string
		reason   string
	}{
		{"not base64", "not an identity!", "not a Tanker identity"},
		{"not json", base64.StdEncoding.EncodeToString([]byte("[1,2]")), "not a Tanker identity"},
		{"public permanent", public, "a public identity"},
		{"public provisional", provPublic, "not a private identity"},
		{"other app", otherApp.identity, "another app"},
		{"user not in the dump", stranger, "not in the dump"},
		{"no verification key", noVK.identity, "no verification key"},
		{"mismatching verification key", mismatch.identity, "matches no ghost device"},
		{"group key mismatch", bob.identity, "does not open or does not match the group's public key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m, err := w.chain.Import(t.Context(), tc.identity)
			require.Nil(t, m)
			var inv *InvalidIdentityError
			require.ErrorAs(t, err, &inv)
			require.Contains(t, inv.Reason, tc.reason)
			require.NotContains(t, inv.Reason, tc.identity)
		})
	}
}

// A Source failure is not an entry error, and is kept in the chain.
func TestSourceErrors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	alice := w.user("alice", true)
	boom := errors.New("database down")
	c, err := New(w.appID, w.appSecret[32:], failing{w.src, boom})
	require.NoError(t, err)
	_, err = c.Import(t.Context(), alice.identity)
	require.ErrorIs(t, err, boom)
	var inv *InvalidIdentityError
	require.False(t, errors.As(err, &inv))
	_, err = c.FindKey(t.Context(), encryption.SimpleID{1})
	require.ErrorIs(t, err, boom)
	require.NotErrorIs(t, err, encryption.ErrKeyNotFound)
}
