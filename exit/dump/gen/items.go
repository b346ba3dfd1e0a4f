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

// record is u as userRecs holds it: userRecSize bytes.
func (u userRec) record() []byte {
	rec := make([]byte, 0, userRecSize)
	rec = append(rec, u.userID[:]...)
	rec = append(rec, u.userPub[:]...)
	rec = append(rec, u.devID[:]...)
	return append(rec, u.devSig...)
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
	u, err := newUserDraft(a, secretIdentity, r)
	if err != nil {
		return err
	}
	when := at(1, i)
	if err := g.ghostDevice(s, a, u, r, when); err != nil {
		return err
	}
	first, err := g.physicalDevices(s, a, u, r, when)
	if err != nil {
		return err
	}
	vk := keys.VerificationKey{PrivateEncryptionKey: u.ghostEnc.Private}
	copy(vk.PrivateSignatureKey[:], u.ghostSig)
	encVK, err := keys.EncryptVerificationKey(vk, u.id.UserSecret, r)
	if err != nil {
		return err
	}
	s.add(tUsers, s.rowFor(tUsers).bytea(a.id[:]).bytea(u.id.UserID).bytea(encVK).timestamp(when).end())
	if a.main {
		s.identities = appendJSONLine(s.identities, dump.IdentityLine{Email: email, Identity: secretIdentity})
	}
	return a.userRecs.put(i, first.record())
}

// userDraft is a user being made: its identity, the keys its devices are made with and,
// once written, the ID of its ghost device, which delegates the physical ones.
type userDraft struct {
	id                *identity.Permanent
	ghostSig          ed25519.PrivateKey
	ghostEnc, userKey keys.EncryptionKeyPair
	ghostID           block.Hash
}

// newUserDraft parses the user's secret identity and draws the ghost device's keys and the
// user key.
func newUserDraft(a *app, secretIdentity string, r *rng) (*userDraft, error) {
	id, err := identity.ParsePermanent(secretIdentity, a.id[:], a.secret[32:])
	if err != nil {
		return nil, err
	}
	u := &userDraft{id: id}
	if u.ghostSig, err = signingKey(r); err != nil {
		return nil, err
	}
	if u.ghostEnc, err = keys.NewEncryptionKeyPair(r); err != nil {
		return nil, err
	}
	if u.userKey, err = keys.NewEncryptionKeyPair(r); err != nil {
		return nil, err
	}
	return u, nil
}

// ghostDevice writes u's ghost device: its author is the trustchain, and it is signed with
// the identity's ephemeral key.
func (g *gen) ghostDevice(s *sink, a *app, u *userDraft, r *rng, when time.Time) error {
	ghost := &block.DeviceCreationAction{Version: 3, IsGhostDevice: true}
	copy(ghost.EphemeralPublicSignatureKey[:], u.id.EphemeralPublicSignatureKey)
	copy(ghost.UserID[:], u.id.UserID)
	copy(ghost.DelegationSignature[:], u.id.DelegationSignature)
	copy(ghost.PublicSignatureKey[:], u.ghostSig[32:])
	ghost.PublicEncryptionKey = u.ghostEnc.Public
	ghost.UserPublicEncryptionKey = u.userKey.Public
	if err := sealInto(ghost.SealedUserPrivateEncryptionKey[:], u.userKey.Private[:], &u.ghostEnc.Public, r); err != nil {
		return err
	}
	ghostBlock := block.New(a.id, ghost, a.id)
	ghostBlock.Sign(u.id.EphemeralPrivateSignatureKey)
	u.ghostID = ghostBlock.Hash()
	g.deviceRow(s, a, u.ghostID, ghost, ghostBlock, when)
	return nil
}

// physicalDevices writes u's one or two physical devices and returns u's record, whose
// device (the first) authors the blocks later items make for the user.
func (g *gen) physicalDevices(s *sink, a *app, u *userDraft, r *rng, when time.Time) (userRec, error) {
	var first userRec
	copy(first.userID[:], u.id.UserID)
	first.userPub = u.userKey.Public
	devices := 1 + r.intn(2)
	for d := 0; d < devices; d++ {
		devID, devSig, err := g.physicalDevice(s, a, u, r, when.Add(time.Duration(d+1)*time.Millisecond))
		if err != nil {
			return userRec{}, err
		}
		if d == 0 {
			first.devID, first.devSig = devID, devSig
		}
	}
	return first, nil
}

// physicalDevice writes a physical device of u, delegated by its ghost device and signed
// with an ephemeral key, and returns its ID and private signature key.
func (g *gen) physicalDevice(s *sink, a *app, u *userDraft, r *rng, when time.Time) (block.Hash, ed25519.PrivateKey, error) {
	eph, err := signingKey(r)
	if err != nil {
		return block.Hash{}, nil, err
	}
	devSig, err := signingKey(r)
	if err != nil {
		return block.Hash{}, nil, err
	}
	devEnc, err := keys.NewEncryptionKeyPair(r)
	if err != nil {
		return block.Hash{}, nil, err
	}
	dev := &block.DeviceCreationAction{Version: 3}
	copy(dev.EphemeralPublicSignatureKey[:], eph[32:])
	copy(dev.UserID[:], u.id.UserID)
	copy(dev.DelegationSignature[:], ed25519.Sign(u.ghostSig, append(append([]byte{}, eph[32:]...), u.id.UserID...)))
	copy(dev.PublicSignatureKey[:], devSig[32:])
	dev.PublicEncryptionKey = devEnc.Public
	dev.UserPublicEncryptionKey = u.userKey.Public
	if err := sealInto(dev.SealedUserPrivateEncryptionKey[:], u.userKey.Private[:], &devEnc.Public, r); err != nil {
		return block.Hash{}, nil, err
	}
	devBlock := block.New(a.id, dev, u.ghostID)
	devBlock.Sign(eph)
	devID := devBlock.Hash()
	g.deviceRow(s, a, devID, dev, devBlock, when)
	return devID, devSig, nil
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
	d, err := newGroupDraft(a, r, 1+i%3)
	if err != nil {
		return err
	}
	idx := d.pickUsers(1 + r.intn(min(4, a.users)))
	creator, err := a.user(idx[0])
	if err != nil {
		return err
	}
	creation, cb, err := d.creation(idx, creator)
	if err != nil {
		return err
	}
	g.groupRows(s, a, creation.PublicSignatureKey, d.enc.Public, cb, creation.Members, creation.ProvisionalMembers, d.version, at(3, 2*i))
	if i%2 == 0 {
		if err := g.groupAddition(s, d, creation.PublicSignatureKey, cb.Hash(), creator, at(3, 2*i+1)); err != nil {
			return err
		}
	}
	return a.groupRecs.put(i, d.enc.Public[:])
}

// groupDraft is a group being made: its version, its keys, and the users already picked as
// members (each is added once).
type groupDraft struct {
	a       *app
	r       *rng
	version int
	sig     ed25519.PrivateKey
	enc     keys.EncryptionKeyPair
	picked  map[int]bool
}

// newGroupDraft draws the keys of a group of the version given.
func newGroupDraft(a *app, r *rng, version int) (*groupDraft, error) {
	d := &groupDraft{a: a, r: r, version: version, picked: map[int]bool{}}
	var err error
	if d.sig, err = signingKey(r); err != nil {
		return nil, err
	}
	if d.enc, err = keys.NewEncryptionKeyPair(r); err != nil {
		return nil, err
	}
	return d, nil
}

// pickUsers picks up to n users not picked yet (fewer when 4n draws do not find them).
func (d *groupDraft) pickUsers(n int) []int {
	var out []int
	for tries := 0; len(out) < n && tries < 4*n; tries++ {
		u := d.r.intn(d.a.users)
		if !d.picked[u] {
			d.picked[u] = true
			out = append(out, u)
		}
	}
	return out
}

// members makes users idx members: the group's private encryption key sealed for each.
func (d *groupDraft) members(idx []int) ([]block.GroupMember, error) {
	out := make([]block.GroupMember, 0, len(idx))
	for _, ui := range idx {
		u, err := d.a.user(ui)
		if err != nil {
			return nil, err
		}
		m := block.GroupMember{UserID: u.userID, UserPublicEncryptionKey: u.userPub}
		if err := sealInto(m.SealedPrivateEncryptionKey[:], d.enc.Private[:], &u.userPub, d.r); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// provMembers makes, from version 2 on and often, a provisional identity a member: the
// group's private encryption key sealed for its app and Tanker halves.
func (d *groupDraft) provMembers() ([]block.GroupProvisionalMember, error) {
	if d.version < 2 || !d.r.chance(60) {
		return nil, nil
	}
	pi := d.a.pickProv(d.r)
	if pi < 0 {
		return nil, nil
	}
	p, err := d.a.prov(pi)
	if err != nil {
		return nil, err
	}
	m := block.GroupProvisionalMember{AppPublicSignatureKey: p.appSigPub, TankerPublicSignatureKey: p.tankerSigPub}
	if d.version >= 3 {
		m.AppPublicEncryptionKey, m.TankerPublicEncryptionKey = p.appEncPub, p.tankerEncPub
	}
	sealed, err := keys.SealTwice(d.enc.Private[:], &p.appEncPub, &p.tankerEncPub, d.r)
	if err != nil {
		return nil, err
	}
	copy(m.TwoTimesSealedPrivateEncryptionKey[:], sealed)
	return []block.GroupProvisionalMember{m}, nil
}

// creation makes the group's creation block, with users idx as members, authored by the
// creator's device.
func (d *groupDraft) creation(idx []int, creator userRec) (*block.UserGroupCreationAction, *block.Block, error) {
	creation := &block.UserGroupCreationAction{Version: d.version, PublicEncryptionKey: d.enc.Public}
	copy(creation.PublicSignatureKey[:], d.sig[32:])
	if err := sealInto(creation.SealedPrivateSignatureKey[:], d.sig, &d.enc.Public, d.r); err != nil {
		return nil, nil, err
	}
	var err error
	if creation.Members, err = d.members(idx); err != nil {
		return nil, nil, err
	}
	if creation.ProvisionalMembers, err = d.provMembers(); err != nil {
		return nil, nil, err
	}
	creation.SelfSign(d.sig)
	cb := block.New(d.a.id, creation, creator.devID)
	cb.Sign(creator.devSig)
	return creation, cb, nil
}

// groupAddition writes an addition block of group groupID after its block prev, with one or
// two new users and maybe a provisional identity: written only when it adds a member.
func (g *gen) groupAddition(s *sink, d *groupDraft, groupID [32]byte, prev block.Hash, creator userRec, when time.Time) error {
	add := &block.UserGroupAdditionAction{Version: d.version, GroupID: groupID, PreviousGroupBlockHash: prev}
	var err error
	if add.Members, err = d.members(d.pickUsers(1 + d.r.intn(2))); err != nil {
		return err
	}
	if add.ProvisionalMembers, err = d.provMembers(); err != nil {
		return err
	}
	if len(add.Members)+len(add.ProvisionalMembers) > 0 {
		add.SelfSign(d.sig)
		ab := block.New(d.a.id, add, creator.devID)
		ab.Sign(creator.devSig)
		g.groupRows(s, d.a, add.GroupID, d.enc.Public, ab, add.Members, add.ProvisionalMembers, d.version, when)
	}
	return nil
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
