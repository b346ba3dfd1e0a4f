package exitdb_test

import (
	"bytes"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/chain/chaintest"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// The audit names, for a key no imported identity reaches, every user who holds it: published
// to them, to a group they are a member of (directly or by a provisional identity they
// claimed), to a provisional identity they claimed; and every provisional identity nobody
// claimed that holds it (published to it, or to a group it is a member of), by the hash its
// public identity carries. Once the identities it names are imported, it says reachable, and
// the resources decrypt.
func TestAuditKeys(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alice := f.User("alice", true)
	bob := f.User("bob", true)
	carol := f.User("carol", true)
	dave := f.User("dave", true)
	_ = f.User("erin", true) // holds nothing
	carolsP := f.Provisional("carol@example.com")
	f.Claim(carol, carolsP)
	davesP := f.Provisional("dave@example.com")
	f.Claim(dave, davesP)
	nobodys := f.Provisional("nobody@example.com")
	phone := f.ProvisionalOf(identity.TargetPhoneNumber, "+33611223344")
	g := f.Group(alice, []*chaintest.User{bob}, []*chaintest.Provisional{davesP})
	pg := f.Group(alice, nil, []*chaintest.Provisional{phone})

	toBob := f.Resource(encryption.V5, []byte("to bob"), alice, bob)
	toGroup := f.Resource(encryption.V7, []byte("to the group"), alice, g)
	toClaimed := f.Resource(encryption.V2, []byte("to carol's provisional"), alice, carolsP)
	toUnclaimed := f.Resource(encryption.V3, []byte("to an unclaimed provisional"), bob, nobodys)
	// Published to unclaimed provisional identities only (Tanker's shareWithSelf false).
	onlyNobody := encryption.SimpleID{9, 9}
	f.Publish(onlyNobody, make([]byte, 32), alice, nobodys)
	onlyPhone := encryption.SimpleID{8, 8}
	f.Publish(onlyPhone, make([]byte, 32), alice, pg)
	f.decoy.User("alice", true)
	f.load()
	db := f.open(exitdb.Config{})

	id := func(ct []byte) encryption.SimpleID {
		_, rid, err := encryption.ExtractResourceID(ct)
		require.NoError(t, err)
		return rid.ID
	}
	unknown := encryption.SimpleID{1, 2, 3}
	ids := []encryption.SimpleID{id(toBob), id(toGroup), id(toClaimed), id(toUnclaimed), unknown, id(toBob), onlyNobody, onlyPhone}
	users := func(us ...*chaintest.User) [][]byte {
		var out [][]byte
		for _, u := range us {
			out = append(out, u.UserID)
		}
		slices.SortFunc(out, bytes.Compare)
		return out
	}
	email := exitdb.ProvisionalHolder{Target: identity.TargetEmail, HashedValue: identity.HashEmail("nobody@example.com")}
	phoneHash := exitdb.ProvisionalHolder{Target: identity.TargetPhoneNumber,
		HashedValue: identity.HashPhoneNumber(phone.Parsed.PrivateSignatureKey, "+33611223344")}
	got, err := db.AuditKeys(t.Context(), ids)
	require.NoError(t, err)
	require.Equal(t, []exitdb.KeyAudit{
		{Holders: users(alice, bob)},
		{Holders: users(alice, bob, dave)},
		{Holders: users(alice, carol)},
		{Holders: users(bob), Provisional: []exitdb.ProvisionalHolder{email}},
		{},
		{Holders: users(alice, bob)},
		{Provisional: []exitdb.ProvisionalHolder{email}},
		{Provisional: []exitdb.ProvisionalHolder{phoneHash}},
	}, got)
	require.Equal(t, phone.Parsed.HashedValue(), phoneHash.HashedValue, "the hash of the public identity")

	// Following the advice for the group's resource: bob's identity.
	_, err = db.Import(t.Context(), []string{bob.Identity})
	require.NoError(t, err)
	got, err = db.AuditKeys(t.Context(), ids)
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, false, true, false, true, false, false}, reachable(got))
	require.Empty(t, got[0].Holders, "holders are only listed for keys out of reach")

	// Dave reaches the group's key through the provisional identity he claimed.
	f2 := f.open(exitdb.Config{})
	_, err = f2.Import(t.Context(), []string{dave.Identity, carol.Identity})
	require.NoError(t, err)
	got, err = db.AuditKeys(t.Context(), ids)
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, true, true, false, true, false, false}, reachable(got))
	for _, ct := range [][]byte{toBob, toGroup, toClaimed} {
		_, err := decrypt(t, db, ct)
		require.NoError(t, err, "what the audit calls reachable decrypts")
	}

	// The provisional identities it names open the keys published to them alone.
	_, err = f2.Import(t.Context(), []string{nobodys.Identity, phone.Identity})
	require.NoError(t, err)
	got, err = db.AuditKeys(t.Context(), ids)
	require.NoError(t, err)
	require.Equal(t, []bool{true, true, true, true, false, true, true, true}, reachable(got))
	kf := db.KeyFinder(t.Context())
	for _, id := range []encryption.SimpleID{onlyNobody, onlyPhone} {
		key, err := kf.FindKey(id)
		require.NoError(t, err)
		require.Equal(t, make([]byte, 32), key)
	}

	got, err = db.AuditKeys(t.Context(), nil)
	require.NoError(t, err)
	require.Empty(t, got)
}

func reachable(as []exitdb.KeyAudit) []bool {
	var out []bool
	for _, a := range as {
		out = append(out, a.Reachable)
	}
	return out
}

// A key published to a big group lists at most MaxHolders holders, the first by user ID.
func TestAuditKeysListsAtMostMaxHolders(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	alice := f.User("alice", true)
	var members []*chaintest.User
	for i := range exitdb.MaxHolders + 3 {
		members = append(members, f.User(string(rune('a'+i))+"-member", true))
	}
	g := f.Group(alice, members, nil)
	ct := f.Resource(encryption.V5, []byte("to the big group"), alice, g)
	f.load()
	db := f.open(exitdb.Config{})
	_, rid, err := encryption.ExtractResourceID(ct)
	require.NoError(t, err)
	got, err := db.AuditKeys(t.Context(), []encryption.SimpleID{rid.ID})
	require.NoError(t, err)
	all := [][]byte{alice.UserID}
	for _, m := range members {
		all = append(all, m.UserID)
	}
	slices.SortFunc(all, bytes.Compare)
	require.Equal(t, all[:exitdb.MaxHolders], got[0].Holders)
}
