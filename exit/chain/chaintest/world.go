package chaintest

import (
	"crypto/ed25519"
	"crypto/rand"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
)

// World builds a trustchain of one app.
type World struct {
	t         testing.TB
	AppID     []byte
	AppSecret []byte
	Dump      Dump
}

// User is a registered user of the World.
type User struct {
	Identity string // the secret permanent identity
	UserID   []byte
	UserKey  keys.EncryptionKeyPair
	DeviceID []byte // the physical device, author of key publishes
	VK       keys.VerificationKey
	Secret   []byte // the identity's user secret
}

// Provisional is a secret provisional identity with its service-held half.
type Provisional struct {
	Identity  string
	Parsed    *identity.Provisional
	App       keys.EncryptionKeyPair
	Tanker    keys.EncryptionKeyPair
	TankerSig ed25519.PublicKey
	// TankerSigPrivate is the service-held private signature key.
	TankerSigPrivate ed25519.PrivateKey
}

// Group is a user group.
type Group struct {
	ID  []byte // public signature key
	Key keys.EncryptionKeyPair
}

// NewWorld creates an app and its root block.
func NewWorld(t testing.TB) *World {
	t.Helper()
	appID, appSecret, err := identity.GenerateApp(nil)
	require.NoError(t, err)
	w := &World{t: t, AppID: appID, AppSecret: appSecret}
	root := block.New(block.Hash{}, &block.TrustchainCreationAction{PublicSignatureKey: [32]byte(appSecret[32:])}, block.Hash{})
	h := root.Hash()
	require.Equal(t, appID, h[:], "the app ID is the root block hash")
	root.TrustchainID = block.Hash(appID)
	w.Dump = Dump{AppID: appID, AppPublicKey: appSecret[32:], RootBlock: root.Serialize()}
	return w
}

// EncKey returns a fresh X25519 key pair.
func (w *World) EncKey() keys.EncryptionKeyPair {
	kp, err := keys.NewEncryptionKeyPair(nil)
	require.NoError(w.t, err)
	return kp
}

func (w *World) sigKey() (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(w.t, err)
	return pub, priv
}

func (w *World) seal(msg []byte, to [32]byte) []byte {
	out, err := keys.Seal(msg, &to, nil)
	require.NoError(w.t, err)
	return out
}

// serialize signs a block of the app carrying a and returns it with its
// hash, parsed back so that what is recorded is what a reader gets.
func (w *World) serialize(a block.Action, author block.Hash, signer ed25519.PrivateKey) ([]byte, block.Hash, block.Action) {
	blk := block.New(block.Hash(w.AppID), a, author)
	blk.Sign(signer)
	raw := blk.Serialize()
	parsed, err := block.Parse(raw)
	require.NoError(w.t, err)
	action, err := parsed.Action()
	require.NoError(w.t, err)
	return raw, parsed.Hash(), action
}

func (w *World) device(u *User, ghost bool, sigPub ed25519.PublicKey, enc keys.EncryptionKeyPair, author block.Hash, signer ed25519.PrivateKey) []byte {
	a := &block.DeviceCreationAction{Version: 3, IsGhostDevice: ghost}
	copy(a.UserID[:], u.UserID)
	copy(a.PublicSignatureKey[:], sigPub)
	a.PublicEncryptionKey = enc.Public
	a.UserPublicEncryptionKey = u.UserKey.Public
	copy(a.SealedUserPrivateEncryptionKey[:], w.seal(u.UserKey.Private[:], enc.Public))
	raw, id, action := w.serialize(a, author, signer)
	d := action.(*block.DeviceCreationAction)
	w.Dump.Devices = append(w.Dump.Devices, DeviceRow{
		DeviceID: id[:], UserID: u.UserID, IsGhostDevice: ghost,
		PublicSignatureKey: d.PublicSignatureKey[:], PublicEncryptionKey: d.PublicEncryptionKey[:],
		UserPublicEncryptionKey: d.UserPublicEncryptionKey[:], SealedUserPrivateEncryptionKey: d.SealedUserPrivateEncryptionKey[:],
		Block: raw,
	})
	return id[:]
}

// User registers a user with a ghost device and a physical device; with
// withVK the users row holds its verification key encrypted under the user
// secret, otherwise NULL.
func (w *World) User(name string, withVK bool) *User {
	s, err := identity.CreatePermanent(w.AppID, w.AppSecret, name)
	require.NoError(w.t, err)
	p, err := identity.ParsePermanent(s, w.AppID, w.AppSecret[32:])
	require.NoError(w.t, err)
	u := &User{Identity: s, UserID: p.UserID, UserKey: w.EncKey(), Secret: p.UserSecret}

	ghostSigPub, ghostSigPriv := w.sigKey()
	ghostEnc := w.EncKey()
	u.VK = keys.VerificationKey{PrivateEncryptionKey: ghostEnc.Private, PrivateSignatureKey: [64]byte(ghostSigPriv)}
	ghostID := w.device(u, true, ghostSigPub, ghostEnc, block.Hash(w.AppID), p.EphemeralPrivateSignatureKey)
	devSigPub, _ := w.sigKey()
	u.DeviceID = w.device(u, false, devSigPub, w.EncKey(), block.Hash(ghostID), ghostSigPriv)

	row := UserRow{UserID: u.UserID}
	if withVK {
		row.EncryptedVerificationKey, err = keys.EncryptVerificationKey(u.VK, p.UserSecret, nil)
		require.NoError(w.t, err)
	}
	w.Dump.Users = append(w.Dump.Users, row)
	return u
}

// SetVerificationKey replaces the users row's encrypted verification key
// of u (nil for NULL).
func (w *World) SetVerificationKey(u *User, encrypted []byte) {
	for i := range w.Dump.Users {
		if slices.Equal(w.Dump.Users[i].UserID, u.UserID) {
			w.Dump.Users[i].EncryptedVerificationKey = encrypted
		}
	}
}

// Provisional creates a secret email provisional identity and its
// service-held half.
func (w *World) Provisional(email string) *Provisional {
	return w.ProvisionalOf(identity.TargetEmail, email)
}

// ProvisionalOf creates a secret provisional identity of target (email or
// phone_number) and value, and its service-held half.
func (w *World) ProvisionalOf(target, value string) *Provisional {
	s, err := identity.CreateProvisional(w.AppID, target, value)
	require.NoError(w.t, err)
	p, err := identity.ParseProvisional(s, w.AppID)
	require.NoError(w.t, err)
	app, err := keys.EncryptionKeyPairFromPrivate(p.PrivateEncryptionKey)
	require.NoError(w.t, err)
	tankerSig, tankerSigPriv := w.sigKey()
	wp := &Provisional{Identity: s, Parsed: p, App: app, Tanker: w.EncKey(), TankerSig: tankerSig, TankerSigPrivate: tankerSigPriv}
	w.Dump.TankerProvisionalKeys = append(w.Dump.TankerProvisionalKeys, TankerKeyRow{
		Target:                     target,
		HashedValue:                p.HashedValue(),
		AppPublicSignatureKey:      p.PublicSignatureKey,
		TankerPublicSignatureKey:   tankerSig,
		TankerPublicEncryptionKey:  wp.Tanker.Public[:],
		TankerPrivateSignatureKey:  tankerSigPriv,
		TankerPrivateEncryptionKey: wp.Tanker.Private[:],
	})
	return wp
}

// Claim attaches a provisional identity to a user (a nature 14 block).
func (w *World) Claim(u *User, p *Provisional) {
	sealed, err := keys.SealClaimKeys(p.App.Private, p.Tanker.Private, &u.UserKey.Public, nil)
	require.NoError(w.t, err)
	a := &block.ProvisionalIdentityClaimAction{UserPublicEncryptionKey: u.UserKey.Public, SealedPrivateEncryptionKeys: [112]byte(sealed)}
	copy(a.UserID[:], u.UserID)
	copy(a.AppPublicSignatureKey[:], p.Parsed.PublicSignatureKey)
	copy(a.TankerPublicSignatureKey[:], p.TankerSig)
	a.SignAuthor(block.Hash(u.DeviceID), p.Parsed.PrivateSignatureKey, p.TankerSigPrivate)
	raw, _, _ := w.serialize(a, block.Hash(u.DeviceID), ed25519.PrivateKey(u.VK.PrivateSignatureKey[:]))
	w.Dump.Claims = append(w.Dump.Claims, ClaimRow{
		UserID: u.UserID, AppPublicSignatureKey: a.AppPublicSignatureKey[:], TankerPublicSignatureKey: a.TankerPublicSignatureKey[:],
		UserPublicEncryptionKey: a.UserPublicEncryptionKey[:], SealedPrivateEncryptionKeys: a.SealedPrivateEncryptionKeys[:],
		Block: raw,
	})
}

// Group creates a group (a nature 17 block) with user and provisional
// members, authored by creator's device.
func (w *World) Group(creator *User, members []*User, provisional []*Provisional) *Group {
	sigPub, sigPriv := w.sigKey()
	g := &Group{ID: sigPub, Key: w.EncKey()}
	a := &block.UserGroupCreationAction{Version: 3, PublicEncryptionKey: g.Key.Public}
	copy(a.PublicSignatureKey[:], sigPub)
	copy(a.SealedPrivateSignatureKey[:], w.seal(sigPriv, g.Key.Public))
	for _, u := range members {
		m := block.GroupMember{UserPublicEncryptionKey: u.UserKey.Public}
		copy(m.UserID[:], u.UserID)
		copy(m.SealedPrivateEncryptionKey[:], w.seal(g.Key.Private[:], u.UserKey.Public))
		a.Members = append(a.Members, m)
	}
	for _, p := range provisional {
		m := block.GroupProvisionalMember{AppPublicEncryptionKey: p.App.Public, TankerPublicEncryptionKey: p.Tanker.Public}
		copy(m.AppPublicSignatureKey[:], p.Parsed.PublicSignatureKey)
		copy(m.TankerPublicSignatureKey[:], p.TankerSig)
		sealed, err := keys.SealTwice(g.Key.Private[:], &p.App.Public, &p.Tanker.Public, nil)
		require.NoError(w.t, err)
		copy(m.TwoTimesSealedPrivateEncryptionKey[:], sealed)
		a.ProvisionalMembers = append(a.ProvisionalMembers, m)
	}
	a.SelfSign(sigPriv)
	raw, _, action := w.serialize(a, block.Hash(creator.DeviceID), ed25519.PrivateKey(creator.VK.PrivateSignatureKey[:]))
	parsed := action.(*block.UserGroupCreationAction)
	w.Dump.Groups = append(w.Dump.Groups, GroupRow{GroupID: g.ID, PublicEncryptionKey: g.Key.Public[:], Nature: int16(parsed.Nature()), Block: raw})
	for _, m := range parsed.Members {
		w.Dump.Members = append(w.Dump.Members, MemberRow{
			GroupID: g.ID, UserID: m.UserID[:], UserPublicEncryptionKey: m.UserPublicEncryptionKey[:],
			SealedGroupPrivateEncryptionKey: m.SealedPrivateEncryptionKey[:],
		})
	}
	for _, m := range parsed.ProvisionalMembers {
		w.Dump.ProvisionalMembers = append(w.Dump.ProvisionalMembers, ProvisionalMemberRow{
			GroupID: g.ID, AppPublicSignatureKey: m.AppPublicSignatureKey[:], TankerPublicSignatureKey: m.TankerPublicSignatureKey[:],
			TwoTimesSealedGroupPrivateEncryptionKey: m.TwoTimesSealedPrivateEncryptionKey[:],
		})
	}
	return g
}

// Publish adds a key publish of key under id to a *User, *Group or
// *Provisional, authored by author's physical device.
func (w *World) Publish(id encryption.SimpleID, key []byte, author *User, to any) {
	var a block.Action
	switch r := to.(type) {
	case *User:
		a = &block.KeyPublishAction{Recipient: r.UserKey.Public, ResourceID: id, SealedKey: [80]byte(w.seal(key, r.UserKey.Public))}
	case *Group:
		a = &block.KeyPublishAction{ToGroup: true, Recipient: r.Key.Public, ResourceID: id, SealedKey: [80]byte(w.seal(key, r.Key.Public))}
	case *Provisional:
		sealed, err := keys.SealTwice(key, &r.App.Public, &r.Tanker.Public, nil)
		require.NoError(w.t, err)
		p := &block.KeyPublishToProvisionalUserAction{ResourceID: id, TwoTimesSealedKey: [128]byte(sealed)}
		copy(p.AppPublicSignatureKey[:], r.Parsed.PublicSignatureKey)
		copy(p.TankerPublicSignatureKey[:], r.TankerSig)
		a = p
	default:
		w.t.Fatalf("chaintest: cannot publish to %T", to)
	}
	raw, _, action := w.serialize(a, block.Hash(author.DeviceID), ed25519.PrivateKey(author.VK.PrivateSignatureKey[:]))
	row := KeyPublishRow{ResourceID: id[:], Nature: int16(a.Nature()), Author: author.DeviceID, Block: raw}
	switch p := action.(type) {
	case *block.KeyPublishAction:
		row.Recipient, row.SealedKey = p.Recipient[:], p.SealedKey[:]
	case *block.KeyPublishToProvisionalUserAction:
		row.Recipient = slices.Concat(p.AppPublicSignatureKey[:], p.TankerPublicSignatureKey[:])
		row.SealedKey = p.TwoTimesSealedKey[:]
	}
	w.Dump.KeyPublishes = append(w.Dump.KeyPublishes, row)
}

// Resource encrypts clear in format v with a fresh key published to its
// creator and to the recipients, and returns the ciphertext.
func (w *World) Resource(v encryption.Version, clear []byte, creator *User, recipients ...any) []byte {
	key := make([]byte, encryption.KeySize)
	_, err := rand.Read(key)
	require.NoError(w.t, err)
	enc, rid, err := encryption.Encrypt(v, key, clear, encryption.EncryptOptions{})
	require.NoError(w.t, err)
	w.Publish(rid.ID, key, creator, creator)
	for _, r := range recipients {
		w.Publish(rid.ID, key, creator, r)
	}
	return enc
}
