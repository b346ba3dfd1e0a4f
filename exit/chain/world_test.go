package chain

import (
	"crypto/ed25519"
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"idvault/app/identity"
	"idvault/exit/block"
	"idvault/exit/encryption"
	"idvault/exit/keys"
)

// world builds a small trustchain of one app into a memSource, with the
// exit/block and exit/keys builders, as a dump generator would.
type world struct {
	t         *testing.T
	appID     []byte
	appSecret []byte
	src       *memSource
	chain     *Chain
}

type worldUser struct {
	identity string
	userID   []byte
	userKey  keys.EncryptionKeyPair
	deviceID []byte // the physical device, author of key publishes
	vk       keys.VerificationKey
}

type worldProvisional struct {
	identity  string
	parsed    *identity.Provisional
	app       keys.EncryptionKeyPair
	tanker    keys.EncryptionKeyPair
	tankerSig ed25519.PublicKey
}

type worldGroup struct {
	id  []byte
	key keys.EncryptionKeyPair
}

func newWorld(t *testing.T) *world {
	t.Helper()
	appID, appSecret, err := identity.GenerateApp(nil)
	require.NoError(t, err)
	w := &world{t: t, appID: appID, appSecret: appSecret, src: newMemSource()}
	w.chain, err = New(appID, appSecret[32:], w.src)
	require.NoError(t, err)
	return w
}

func (w *world) encKey() keys.EncryptionKeyPair {
	kp, err := keys.NewEncryptionKeyPair(nil)
	require.NoError(w.t, err)
	return kp
}

func (w *world) sigKey() (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(w.t, err)
	return pub, priv
}

func (w *world) seal(msg []byte, to [32]byte) []byte {
	out, err := keys.Seal(msg, &to, nil)
	require.NoError(w.t, err)
	return out
}

// device adds a DeviceCreation v3 block of the user and returns its ID.
func (w *world) device(u *worldUser, ghost bool, sigPub ed25519.PublicKey, enc keys.EncryptionKeyPair, author [32]byte, signer ed25519.PrivateKey) []byte {
	a := &block.DeviceCreationAction{Version: 3, IsGhostDevice: ghost}
	copy(a.UserID[:], u.userID)
	copy(a.PublicSignatureKey[:], sigPub)
	a.PublicEncryptionKey = enc.Public
	a.UserPublicEncryptionKey = u.userKey.Public
	copy(a.SealedUserPrivateEncryptionKey[:], w.seal(u.userKey.Private[:], enc.Public))
	blk := block.New(block.Hash(w.appID), a, author)
	blk.Sign(signer)
	raw := blk.Serialize()
	parsed, err := block.Parse(raw)
	require.NoError(w.t, err)
	action, err := parsed.Action()
	require.NoError(w.t, err)
	id := parsed.Hash()
	w.src.devices = append(w.src.devices, memDevice{
		userID: u.userID, deviceID: id[:], publicSignatureKey: sigPub, ghost: ghost,
		action: action.(*block.DeviceCreationAction),
	})
	return id[:]
}

// user creates a user with a ghost device, a physical device and, if
// withVK, its verification key encrypted under the user secret.
func (w *world) user(name string, withVK bool) *worldUser {
	s, err := identity.CreatePermanent(w.appID, w.appSecret, name)
	require.NoError(w.t, err)
	p, err := identity.ParsePermanent(s, w.appID, w.appSecret[32:])
	require.NoError(w.t, err)
	u := &worldUser{identity: s, userID: p.UserID, userKey: w.encKey()}

	ghostSigPub, ghostSigPriv := w.sigKey()
	ghostEnc := w.encKey()
	u.vk = keys.VerificationKey{PrivateEncryptionKey: ghostEnc.Private, PrivateSignatureKey: [64]byte(ghostSigPriv)}
	ghostID := w.device(u, true, ghostSigPub, ghostEnc, block.Hash(w.appID), p.EphemeralPrivateSignatureKey)
	devSigPub, _ := w.sigKey()
	u.deviceID = w.device(u, false, devSigPub, w.encKey(), block.Hash(ghostID), ghostSigPriv)

	row := User{UserID: u.userID}
	if withVK {
		row.EncryptedVerificationKey, err = keys.EncryptVerificationKey(u.vk, p.UserSecret, nil)
		require.NoError(w.t, err)
	}
	w.src.users[string(u.userID)] = row
	return u
}

// provisional creates a secret provisional identity and the service-held
// half in tanker_provisional_keys.
func (w *world) provisional(email string) *worldProvisional {
	s, err := identity.CreateProvisional(w.appID, identity.TargetEmail, email)
	require.NoError(w.t, err)
	p, err := identity.ParseProvisional(s, w.appID)
	require.NoError(w.t, err)
	app, err := keys.EncryptionKeyPairFromPrivate(p.PrivateEncryptionKey)
	require.NoError(w.t, err)
	tankerSig, _ := w.sigKey()
	wp := &worldProvisional{identity: s, parsed: p, app: app, tanker: w.encKey(), tankerSig: tankerSig}
	w.src.tankerKeys = append(w.src.tankerKeys, TankerProvisionalKey{
		Target:                     identity.TargetEmail,
		HashedValue:                p.HashedValue(),
		AppPublicSignatureKey:      p.PublicSignatureKey,
		TankerPublicSignatureKey:   tankerSig,
		TankerPublicEncryptionKey:  wp.tanker.Public[:],
		TankerPrivateEncryptionKey: wp.tanker.Private[:],
	})
	return wp
}

// claim attaches a provisional identity to a user.
func (w *world) claim(u *worldUser, p *worldProvisional) {
	sealed, err := keys.SealClaimKeys(p.app.Private, p.tanker.Private, &u.userKey.Public, nil)
	require.NoError(w.t, err)
	w.src.claims[string(u.userID)] = append(w.src.claims[string(u.userID)], Claim{
		AppPublicSignatureKey:       p.parsed.PublicSignatureKey,
		TankerPublicSignatureKey:    p.tankerSig,
		UserPublicEncryptionKey:     u.userKey.Public[:],
		SealedPrivateEncryptionKeys: sealed,
	})
}

// group creates a group (creation v3 block) with user and provisional
// members.
func (w *world) group(members []*worldUser, provisional []*worldProvisional) *worldGroup {
	sigPub, _ := w.sigKey()
	g := &worldGroup{id: sigPub, key: w.encKey()}
	a := &block.UserGroupCreationAction{Version: 3, PublicEncryptionKey: g.key.Public}
	copy(a.PublicSignatureKey[:], sigPub)
	for _, u := range members {
		m := block.GroupMember{UserPublicEncryptionKey: u.userKey.Public}
		copy(m.UserID[:], u.userID)
		copy(m.SealedPrivateEncryptionKey[:], w.seal(g.key.Private[:], u.userKey.Public))
		a.Members = append(a.Members, m)
	}
	for _, p := range provisional {
		m := block.GroupProvisionalMember{AppPublicEncryptionKey: p.app.Public, TankerPublicEncryptionKey: p.tanker.Public}
		copy(m.AppPublicSignatureKey[:], p.parsed.PublicSignatureKey)
		copy(m.TankerPublicSignatureKey[:], p.tankerSig)
		sealed, err := keys.SealTwice(g.key.Private[:], &p.app.Public, &p.tanker.Public, nil)
		require.NoError(w.t, err)
		copy(m.TwoTimesSealedPrivateEncryptionKey[:], sealed)
		a.ProvisionalMembers = append(a.ProvisionalMembers, m)
	}
	parsed, err := block.ParsePayload(a.Nature(), a.AppendPayload(nil))
	require.NoError(w.t, err)
	a = parsed.(*block.UserGroupCreationAction)
	w.src.groups[string(g.id)] = g.key.Public[:]
	for _, m := range a.Members {
		w.src.members = append(w.src.members, memMember{groupID: g.id, action: m})
	}
	for _, m := range a.ProvisionalMembers {
		w.src.provMembers = append(w.src.provMembers, memProvMember{groupID: g.id, action: m})
	}
	return g
}

// publish adds a key publish of key under id, built as a block payload.
func (w *world) publish(id encryption.SimpleID, key []byte, author []byte, to any) {
	var a block.Action
	switch r := to.(type) {
	case *worldUser:
		a = &block.KeyPublishAction{Recipient: r.userKey.Public, ResourceID: id, SealedKey: [80]byte(w.seal(key, r.userKey.Public))}
	case *worldGroup:
		a = &block.KeyPublishAction{ToGroup: true, Recipient: r.key.Public, ResourceID: id, SealedKey: [80]byte(w.seal(key, r.key.Public))}
	case *worldProvisional:
		sealed, err := keys.SealTwice(key, &r.app.Public, &r.tanker.Public, nil)
		require.NoError(w.t, err)
		p := &block.KeyPublishToProvisionalUserAction{ResourceID: id, TwoTimesSealedKey: [128]byte(sealed)}
		copy(p.AppPublicSignatureKey[:], r.parsed.PublicSignatureKey)
		copy(p.TankerPublicSignatureKey[:], r.tankerSig)
		a = p
	}
	parsed, err := block.ParsePayload(a.Nature(), a.AppendPayload(nil))
	require.NoError(w.t, err)
	row := KeyPublish{Nature: a.Nature(), Author: author}
	switch p := parsed.(type) {
	case *block.KeyPublishAction:
		row.Recipient, row.SealedKey = p.Recipient[:], p.SealedKey[:]
	case *block.KeyPublishToProvisionalUserAction:
		row.Recipient = append(p.AppPublicSignatureKey[:], p.TankerPublicSignatureKey[:]...)
		row.SealedKey = p.TwoTimesSealedKey[:]
	}
	w.src.publishes[id] = append(w.src.publishes[id], row)
}

// resource encrypts clear in format v with a fresh key published to the
// recipients by the creator's device, and returns the ciphertext.
func (w *world) resource(v encryption.Version, clear []byte, creator *worldUser, recipients ...any) []byte {
	key := make([]byte, 32)
	_, err := rand.Read(key)
	require.NoError(w.t, err)
	enc, rid, err := encryption.Encrypt(v, key, clear, encryption.EncryptOptions{})
	require.NoError(w.t, err)
	w.publish(rid.ID, key, creator.deviceID, creator)
	for _, r := range recipients {
		w.publish(rid.ID, key, creator.deviceID, r)
	}
	return enc
}

// importOK imports an identity and stores its material.
func (w *world) importOK(s string) *Material {
	m, err := w.chain.Import(w.t.Context(), s)
	require.NoError(w.t, err)
	w.src.store(m)
	return m
}
