package gen

import (
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/keys"
)

// Record sizes: what later items need about a user, a provisional identity, a group.
const (
	// user ID, user public encryption key, first physical device ID, its private signature key
	userRecSize = 32 + 32 + 32 + 64
	// app and Tanker public signature keys, app and Tanker public encryption keys
	provRecSize = 4 * 32
	// group public encryption key
	groupRecSize = 32
)

type userRec struct {
	userID  [32]byte
	userPub [32]byte
	devID   block.Hash
	devSig  ed25519.PrivateKey
}

func (a *app) user(i int) (userRec, error) {
	b, err := a.userRecs.get(i)
	if err != nil {
		return userRec{}, err
	}
	var u userRec
	copy(u.userID[:], b[0:32])
	copy(u.userPub[:], b[32:64])
	copy(u.devID[:], b[64:96])
	u.devSig = ed25519.PrivateKey(b[96:160])
	return u, nil
}

type provRec struct {
	appSigPub, tankerSigPub, appEncPub, tankerEncPub [32]byte
}

func (a *app) prov(i int) (provRec, error) {
	b, err := a.provRecs.get(i)
	if err != nil {
		return provRec{}, err
	}
	var p provRec
	copy(p.appSigPub[:], b[0:32])
	copy(p.tankerSigPub[:], b[32:64])
	copy(p.appEncPub[:], b[64:96])
	copy(p.tankerEncPub[:], b[96:128])
	return p, nil
}

func (a *app) userEmail(i int) string { return fmt.Sprintf("user%06d@%s", i, a.domain) }
func (a *app) provEmail(i int) string { return fmt.Sprintf("invitee%06d@%s", i, a.domain) }

// at spreads creation times after the root block: phase p, item i.
func at(p, i int) time.Time {
	return epoch.Add(time.Duration(p)*24*time.Hour + time.Duration(i)*time.Second)
}

func appendJSONLine(dst []byte, v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("dump: marshal: " + err.Error()) // plain structs of strings and numbers
	}
	return append(append(dst, b...), '\n')
}

func signingKey(r io.Reader) (ed25519.PrivateKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(r, seed); err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// userItem makes user i: identity, ghost device (DeviceCreation v3 delegated by the identity),
// one or two physical devices (delegated by the ghost device), and the verification key
// encrypted under the user secret.
func (g *gen) userItem(a *app, i int, s *sink) error {
	r := itemRNG(g.opts.Seed, a.label+"/user", i)
	email := a.userEmail(i)
	secretIdentity, err := identity.CreatePermanentWith(a.id[:], a.secret, email, r)
	if err != nil {
		return err
	}
	id, err := identity.ParsePermanent(secretIdentity, a.id[:], a.secret[32:])
	if err != nil {
		return err
	}
	ghostSig, err := signingKey(r)
	if err != nil {
		return err
	}
	ghostEnc, err := keys.NewEncryptionKeyPair(r)
	if err != nil {
		return err
	}
	userKey, err := keys.NewEncryptionKeyPair(r)
	if err != nil {
		return err
	}
	when := at(1, i)

	// Ghost device: author is the trustchain, signed with the identity's ephemeral key.
	ghost := &block.DeviceCreationAction{Version: 3, IsGhostDevice: true}
	copy(ghost.EphemeralPublicSignatureKey[:], id.EphemeralPublicSignatureKey)
	copy(ghost.UserID[:], id.UserID)
	copy(ghost.DelegationSignature[:], id.DelegationSignature)
	copy(ghost.PublicSignatureKey[:], ghostSig[32:])
	ghost.PublicEncryptionKey = ghostEnc.Public
	ghost.UserPublicEncryptionKey = userKey.Public
	if err := sealInto(ghost.SealedUserPrivateEncryptionKey[:], userKey.Private[:], &ghostEnc.Public, r); err != nil {
		return err
	}
	ghostBlock := block.New(a.id, ghost, a.id)
	ghostBlock.Sign(id.EphemeralPrivateSignatureKey)
	ghostID := ghostBlock.Hash()
	g.deviceRow(s, a, ghostID, ghost, ghostBlock, when)

	var first userRec
	copy(first.userID[:], id.UserID)
	first.userPub = userKey.Public
	devices := 1 + r.intn(2)
	for d := 0; d < devices; d++ {
		eph, err := signingKey(r)
		if err != nil {
			return err
		}
		devSig, err := signingKey(r)
		if err != nil {
			return err
		}
		devEnc, err := keys.NewEncryptionKeyPair(r)
		if err != nil {
			return err
		}
		dev := &block.DeviceCreationAction{Version: 3}
		copy(dev.EphemeralPublicSignatureKey[:], eph[32:])
		dev.UserID = ghost.UserID
		copy(dev.DelegationSignature[:], ed25519.Sign(ghostSig, append(append([]byte{}, eph[32:]...), id.UserID...)))
		copy(dev.PublicSignatureKey[:], devSig[32:])
		dev.PublicEncryptionKey = devEnc.Public
		dev.UserPublicEncryptionKey = userKey.Public
		if err := sealInto(dev.SealedUserPrivateEncryptionKey[:], userKey.Private[:], &devEnc.Public, r); err != nil {
			return err
		}
		devBlock := block.New(a.id, dev, ghostID)
		devBlock.Sign(eph)
		devID := devBlock.Hash()
		g.deviceRow(s, a, devID, dev, devBlock, when.Add(time.Duration(d+1)*time.Millisecond))
		if d == 0 {
			first.devID, first.devSig = devID, devSig
		}
	}

	vk := keys.VerificationKey{PrivateEncryptionKey: ghostEnc.Private}
	copy(vk.PrivateSignatureKey[:], ghostSig)
	encVK, err := keys.EncryptVerificationKey(vk, id.UserSecret, r)
	if err != nil {
		return err
	}
	s.add(tUsers, s.rowFor(tUsers).bytea(a.id[:]).bytea(id.UserID).bytea(encVK).timestamp(when).end())
	if a.main {
		s.identities = appendJSONLine(s.identities, dump.IdentityLine{Email: email, Identity: secretIdentity})
	}
	rec := make([]byte, 0, userRecSize)
	rec = append(rec, first.userID[:]...)
	rec = append(rec, first.userPub[:]...)
	rec = append(rec, first.devID[:]...)
	rec = append(rec, first.devSig...)
	return a.userRecs.put(i, rec)
}

func (g *gen) deviceRow(s *sink, a *app, id block.Hash, d *block.DeviceCreationAction, b *block.Block, when time.Time) {
	s.add(tDevices, s.rowFor(tDevices).bytea(a.id[:]).bytea(id[:]).bytea(d.UserID[:]).boolean(d.IsGhostDevice).
		bytea(d.PublicSignatureKey[:]).bytea(d.PublicEncryptionKey[:]).bytea(d.UserPublicEncryptionKey[:]).
		bytea(d.SealedUserPrivateEncryptionKey[:]).bytea(b.Serialize()).timestamp(when).end())
}

// sealInto seals msg for recipient into dst, which must be len(msg)+48 bytes.
func sealInto(dst, msg []byte, recipient *[32]byte, r io.Reader) error {
	sealed, err := keys.Seal(msg, recipient, r)
	if err != nil {
		return err
	}
	if len(sealed) != len(dst) {
		return fmt.Errorf("sealed %d bytes, want %d", len(sealed), len(dst))
	}
	copy(dst, sealed)
	return nil
}

// provItem makes provisional identity i: its app half (the secret provisional identity),
// the Tanker half kept by the service, and for every other one a claim by a user.
func (g *gen) provItem(a *app, i int, s *sink) error {
	r := itemRNG(g.opts.Seed, a.label+"/prov", i)
	email := a.provEmail(i)
	secretIdentity, err := identity.CreateProvisionalWith(a.id[:], identity.TargetEmail, email, r)
	if err != nil {
		return err
	}
	p, err := identity.ParseProvisional(secretIdentity, a.id[:])
	if err != nil {
		return err
	}
	tankerSig, err := signingKey(r)
	if err != nil {
		return err
	}
	tankerEnc, err := keys.NewEncryptionKeyPair(r)
	if err != nil {
		return err
	}
	s.add(tTankerProvisionalKeys, s.rowFor(tTankerProvisionalKeys).bytea(a.id[:]).text(identity.TargetEmail).
		bytea(p.HashedValue()).bytea(p.PublicSignatureKey).bytea(tankerSig[32:]).bytea(tankerEnc.Public[:]).
		bytea(tankerSig).bytea(tankerEnc.Private[:]).end())

	if i%2 == 0 && i != a.withheld && a.users > 0 {
		u, err := a.user(r.intn(a.users))
		if err != nil {
			return err
		}
		claim := &block.ProvisionalIdentityClaimAction{UserID: u.userID, UserPublicEncryptionKey: u.userPub}
		copy(claim.AppPublicSignatureKey[:], p.PublicSignatureKey)
		copy(claim.TankerPublicSignatureKey[:], tankerSig[32:])
		claim.SignAuthor(u.devID, p.PrivateSignatureKey, tankerSig)
		var appPriv [32]byte
		copy(appPriv[:], p.PrivateEncryptionKey)
		sealed, err := keys.SealClaimKeys(appPriv, tankerEnc.Private, &u.userPub, r)
		if err != nil {
			return err
		}
		copy(claim.SealedPrivateEncryptionKeys[:], sealed)
		b := block.New(a.id, claim, u.devID)
		b.Sign(u.devSig)
		s.add(tProvisionalIdentityClaims, s.rowFor(tProvisionalIdentityClaims).bytea(a.id[:]).bytea(u.userID[:]).
			bytea(claim.AppPublicSignatureKey[:]).bytea(claim.TankerPublicSignatureKey[:]).bytea(u.userPub[:]).
			bytea(sealed).bytea(b.Serialize()).timestamp(at(2, i)).end())
	}
	if a.main && i != a.withheld {
		s.identities = appendJSONLine(s.identities, dump.IdentityLine{Email: email, Identity: secretIdentity})
	}
	rec := make([]byte, 0, provRecSize)
	rec = append(rec, p.PublicSignatureKey...)
	rec = append(rec, tankerSig[32:]...)
	rec = append(rec, p.PublicEncryptionKey...)
	rec = append(rec, tankerEnc.Public[:]...)
	return a.provRecs.put(i, rec)
}

// pickProv returns a provisional identity other than the withheld one, or -1.
func (a *app) pickProv(r *rng) int {
	n := a.provs
	if a.withheld >= 0 {
		n-- // the withheld one is the last
	}
	if n <= 0 {
		return -1
	}
	return r.intn(n)
}

// groupItem makes group i: a creation block (natures 10, 15, 17 in turn) and, for every
// other group, an addition block of the same version (12, 16, 18), with user members and,
// from version 2 on, provisional members.
func (g *gen) groupItem(a *app, i int, s *sink) error {
	if a.users == 0 {
		return nil
	}
	r := itemRNG(g.opts.Seed, a.label+"/group", i)
	version := 1 + i%3
	gSig, err := signingKey(r)
	if err != nil {
		return err
	}
	gEnc, err := keys.NewEncryptionKeyPair(r)
	if err != nil {
		return err
	}
	picked := map[int]bool{}
	pickUsers := func(n int) []int {
		var out []int
		for tries := 0; len(out) < n && tries < 4*n; tries++ {
			u := r.intn(a.users)
			if !picked[u] {
				picked[u] = true
				out = append(out, u)
			}
		}
		return out
	}
	members := func(idx []int) ([]block.GroupMember, error) {
		out := make([]block.GroupMember, 0, len(idx))
		for _, ui := range idx {
			u, err := a.user(ui)
			if err != nil {
				return nil, err
			}
			m := block.GroupMember{UserID: u.userID, UserPublicEncryptionKey: u.userPub}
			if err := sealInto(m.SealedPrivateEncryptionKey[:], gEnc.Private[:], &u.userPub, r); err != nil {
				return nil, err
			}
			out = append(out, m)
		}
		return out, nil
	}
	provMembers := func() ([]block.GroupProvisionalMember, error) {
		if version < 2 || !r.chance(60) {
			return nil, nil
		}
		pi := a.pickProv(r)
		if pi < 0 {
			return nil, nil
		}
		p, err := a.prov(pi)
		if err != nil {
			return nil, err
		}
		m := block.GroupProvisionalMember{AppPublicSignatureKey: p.appSigPub, TankerPublicSignatureKey: p.tankerSigPub}
		if version >= 3 {
			m.AppPublicEncryptionKey, m.TankerPublicEncryptionKey = p.appEncPub, p.tankerEncPub
		}
		sealed, err := keys.SealTwice(gEnc.Private[:], &p.appEncPub, &p.tankerEncPub, r)
		if err != nil {
			return nil, err
		}
		copy(m.TwoTimesSealedPrivateEncryptionKey[:], sealed)
		return []block.GroupProvisionalMember{m}, nil
	}

	idx := pickUsers(1 + r.intn(min(4, a.users)))
	creator, err := a.user(idx[0])
	if err != nil {
		return err
	}
	creation := &block.UserGroupCreationAction{Version: version, PublicEncryptionKey: gEnc.Public}
	copy(creation.PublicSignatureKey[:], gSig[32:])
	if err := sealInto(creation.SealedPrivateSignatureKey[:], gSig, &gEnc.Public, r); err != nil {
		return err
	}
	if creation.Members, err = members(idx); err != nil {
		return err
	}
	if creation.ProvisionalMembers, err = provMembers(); err != nil {
		return err
	}
	creation.SelfSign(gSig)
	cb := block.New(a.id, creation, creator.devID)
	cb.Sign(creator.devSig)
	g.groupRows(s, a, creation.PublicSignatureKey, gEnc.Public, cb, creation.Members, creation.ProvisionalMembers, version, at(3, 2*i))

	if i%2 == 0 {
		add := &block.UserGroupAdditionAction{Version: version, GroupID: creation.PublicSignatureKey, PreviousGroupBlockHash: cb.Hash()}
		if add.Members, err = members(pickUsers(1 + r.intn(2))); err != nil {
			return err
		}
		if add.ProvisionalMembers, err = provMembers(); err != nil {
			return err
		}
		if len(add.Members)+len(add.ProvisionalMembers) > 0 {
			add.SelfSign(gSig)
			ab := block.New(a.id, add, creator.devID)
			ab.Sign(creator.devSig)
			g.groupRows(s, a, add.GroupID, gEnc.Public, ab, add.Members, add.ProvisionalMembers, version, at(3, 2*i+1))
		}
	}
	return a.groupRecs.put(i, gEnc.Public[:])
}

func (g *gen) groupRows(s *sink, a *app, groupID, encPub [32]byte, b *block.Block, members []block.GroupMember,
	provs []block.GroupProvisionalMember, version int, when time.Time) {
	s.add(tUserGroups, s.rowFor(tUserGroups).bytea(a.id[:]).bytea(groupID[:]).bytea(encPub[:]).
		integer(int64(b.Nature)).bytea(b.Serialize()).timestamp(when).end())
	for _, m := range members {
		var uid []byte
		if version >= 2 {
			uid = m.UserID[:]
		}
		s.add(tUserGroupMembers, s.rowFor(tUserGroupMembers).bytea(a.id[:]).bytea(groupID[:]).bytea(uid).
			bytea(m.UserPublicEncryptionKey[:]).bytea(m.SealedPrivateEncryptionKey[:]).end())
	}
	for _, p := range provs {
		s.add(tUserGroupProvisionalMembers, s.rowFor(tUserGroupProvisionalMembers).bytea(a.id[:]).bytea(groupID[:]).
			bytea(p.AppPublicSignatureKey[:]).bytea(p.TankerPublicSignatureKey[:]).
			bytea(p.TwoTimesSealedPrivateEncryptionKey[:]).end())
	}
}
