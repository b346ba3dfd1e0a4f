package chain

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/keys"
)

// Import parses one private identity (permanent or provisional, any Tanker
// library's field order) and follows the chain to the key pairs it gives.
// Errors due to the identity or to what the dump holds for it are
// *InvalidIdentityError; others come from the Source.
func (c *Chain) Import(ctx context.Context, privateIdentity string) (*Material, error) {
	ms, errs, err := c.ImportBatch(ctx, []string{privateIdentity})
	if err != nil {
		return nil, err
	}
	if errs[0] != nil {
		return nil, errs[0]
	}
	return ms[0], nil
}

// ImportBatch imports a batch of identities with one Source lookup per
// step for the whole batch, and the cryptography spread over the CPUs.
// For each entry it returns either its Material or an
// *InvalidIdentityError; the last error is a Source failure, which aborts
// the whole batch.
func (c *Chain) ImportBatch(ctx context.Context, identities []string) ([]*Material, []error, error) {
	b := &batch{c: c, ctx: ctx, entries: make([]entry, len(identities))}
	parallel(len(identities), func(i int) { b.entries[i].parse(c, identities[i]) })
	steps := []func() error{b.users, b.ghostDevices, b.claims, b.tankerHalves, b.groups}
	for _, step := range steps {
		if err := step(); err != nil {
			return nil, nil, err
		}
	}
	ms := make([]*Material, len(identities))
	errs := make([]error, len(identities))
	for i, e := range b.entries {
		if e.err != nil {
			errs[i] = e.err
		} else {
			ms[i] = e.m
		}
	}
	return ms, errs, nil
}

// entry is one identity of a batch on its way through the chain.
type entry struct {
	perm *identity.Permanent
	prov *identity.Provisional
	vk   keys.VerificationKey
	m    *Material
	err  error // an *InvalidIdentityError; the entry is done
}

func (e *entry) ok() bool { return e.err == nil }

type batch struct {
	c       *Chain
	ctx     context.Context
	entries []entry
}

// parallel runs f(0..n-1) on a few goroutines (the chain's work is mostly
// X25519 and Ed25519).
func parallel(n int, f func(i int)) {
	workers := min(n, 2*runtime.GOMAXPROCS(0), 8)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// walk runs f, in order and on the calling goroutine, on the entries
// still in progress that satisfy keep.
func (b *batch) walk(keep func(e *entry) bool, f func(e *entry)) {
	for i := range b.entries {
		if e := &b.entries[i]; e.ok() && keep(e) {
			f(e)
		}
	}
}

// each runs f in parallel on the entries still in progress that satisfy
// keep.
func (b *batch) each(keep func(e *entry) bool, f func(e *entry)) {
	var idx []int
	for i := range b.entries {
		if e := &b.entries[i]; e.ok() && keep(e) {
			idx = append(idx, i)
		}
	}
	parallel(len(idx), func(k int) { f(&b.entries[idx[k]]) })
}

func permanent(e *entry) bool   { return e.perm != nil }
func provisional(e *entry) bool { return e.prov != nil }

func (e *entry) parse(c *Chain, s string) {
	p, err := identity.ParsePermanent(s, c.appID, c.appPublicKey)
	if err == nil {
		e.perm = p
		return
	}
	if !errors.Is(err, identity.ErrUnsupportedTarget) {
		e.err = parseFailure(err)
		return
	}
	pp, err := identity.ParseProvisional(s, c.appID)
	switch {
	case err == nil:
		e.prov = pp
	case errors.Is(err, identity.ErrUnsupportedTarget):
		e.err = invalid("not a private identity: its target is neither a user nor an email or phone number " +
			"(public provisional identities cannot be imported)")
	default:
		e.err = parseFailure(err)
	}
}

// parseFailure turns an app/identity parse error into a reason. The
// identity parser's own messages are not reused: a sentence per cause is
// clearer, and none can echo the input.
func parseFailure(err error) error {
	switch {
	case errors.Is(err, identity.ErrMalformedIdentity):
		return invalid("not a Tanker identity: not the base64 of a JSON identity document")
	case errors.Is(err, identity.ErrWrongApp):
		return invalid("an identity of another app")
	case errors.Is(err, identity.ErrPublicIdentity):
		return invalid("a public identity: the private identity is needed")
	case errors.Is(err, identity.ErrBadDelegationSignature):
		return invalid("the identity's delegation signature does not verify with the app's public key")
	case errors.Is(err, identity.ErrBadUserSecret):
		return invalid("the identity's user secret is damaged (wrong check byte)")
	case errors.Is(err, identity.ErrKeyMismatch):
		return invalid("the identity's private and public keys do not match")
	default:
		return invalid("an invalid identity: a field is missing or has the wrong size")
	}
}

// users reads the users rows and decrypts the verification keys.
func (b *batch) users() error {
	var ids [][]byte
	b.walk(permanent, func(e *entry) { ids = append(ids, e.perm.UserID) })
	if len(ids) == 0 {
		return nil
	}
	rows, err := b.c.src.Users(b.ctx, ids)
	if err != nil {
		return fmt.Errorf("chain: read users: %w", err)
	}
	byID := make(map[string]User, len(rows))
	for _, u := range rows {
		byID[string(u.UserID)] = u
	}
	b.each(permanent, func(e *entry) {
		u, found := byID[string(e.perm.UserID)]
		switch {
		case !found:
			e.err = invalid("the user is not in the dump")
		case u.EncryptedVerificationKey == nil:
			e.err = invalid("the dump holds no verification key for the user " +
				"(the user keeps it, or verifies with an end-to-end passphrase only)")
		default:
			vk, err := keys.DecryptVerificationKey(u.EncryptedVerificationKey, e.perm.UserSecret)
			if err != nil {
				e.err = invalid("the user's stored verification key does not decrypt with the identity's user secret")
				return
			}
			e.vk = vk
		}
	})
	return nil
}

// ghostDevices finds each user's ghost device and opens the user key.
func (b *batch) ghostDevices() error {
	var ids, sigs [][]byte
	b.walk(permanent, func(e *entry) {
		ids = append(ids, e.perm.UserID)
		sigs = append(sigs, e.vk.PublicSignatureKey())
	})
	if len(ids) == 0 {
		return nil
	}
	rows, err := b.c.src.GhostDevices(b.ctx, ids, sigs)
	if err != nil {
		return fmt.Errorf("chain: read ghost devices: %w", err)
	}
	byKey := make(map[string]Device, len(rows))
	for _, d := range rows {
		byKey[string(d.UserID)+string(d.PublicSignatureKey)] = d
	}
	b.each(permanent, func(e *entry) {
		dev, found := byKey[string(e.perm.UserID)+string(e.vk.PublicSignatureKey())]
		if !found {
			e.err = invalid("the verification key matches no ghost device of the user")
			return
		}
		if len(dev.PublicEncryptionKey) != keys.KeySize || len(dev.UserPublicEncryptionKey) != keys.KeySize ||
			dev.SealedUserPrivateEncryptionKey == nil {
			e.err = invalid("the user's ghost device carries no user key")
			return
		}
		// The ghost pair takes its public half from the device row rather
		// than deriving it (an X25519 operation per identity): a private
		// key that is not that public key's cannot open the sealed user key.
		ghost := keys.EncryptionKeyPair{Public: [keys.KeySize]byte(dev.PublicEncryptionKey), Private: e.vk.PrivateEncryptionKey}
		userKey, err := keys.OpenSealedPrivateEncryptionKey(dev.SealedUserPrivateEncryptionKey, ghost, [keys.KeySize]byte(dev.UserPublicEncryptionKey))
		if err != nil {
			e.err = invalid("the ghost device's sealed user key does not open with the verification key " +
				"(it is not the ghost device's) or does not match the user public key")
			return
		}
		e.m = &Material{Kind: Permanent, ID: bytes.Clone(e.perm.UserID), UserKeys: []keys.EncryptionKeyPair{userKey}}
	})
	return nil
}

// claims opens the users' provisional identity claims.
func (b *batch) claims() error {
	var ids [][]byte
	b.walk(permanent, func(e *entry) { ids = append(ids, e.perm.UserID) })
	if len(ids) == 0 {
		return nil
	}
	rows, err := b.c.src.Claims(b.ctx, ids)
	if err != nil {
		return fmt.Errorf("chain: read provisional identity claims: %w", err)
	}
	byUser := make(map[string][]Claim)
	for _, cl := range rows {
		byUser[string(cl.UserID)] = append(byUser[string(cl.UserID)], cl)
	}
	b.each(permanent, func(e *entry) {
		userKey := e.m.UserKeys[0]
		for _, cl := range byUser[string(e.perm.UserID)] {
			if !bytes.Equal(cl.UserPublicEncryptionKey, userKey.Public[:]) ||
				len(cl.AppPublicSignatureKey) != keys.KeySize || len(cl.TankerPublicSignatureKey) != keys.KeySize {
				e.err = invalid("a provisional identity claim of the user is not sealed to the user key")
				return
			}
			app, tanker, err := keys.OpenClaimKeys(cl.SealedPrivateEncryptionKeys, userKey)
			if err != nil {
				e.err = invalid("a provisional identity claim of the user does not open with the user key")
				return
			}
			e.m.addProvisional(ProvisionalKeyPair{
				AppPublicSignatureKey:    [keys.KeySize]byte(cl.AppPublicSignatureKey),
				TankerPublicSignatureKey: [keys.KeySize]byte(cl.TankerPublicSignatureKey),
				App:                      app,
				Tanker:                   tanker,
			})
		}
	})
	return nil
}

// tankerHalves joins each provisional identity's app half with the
// service-held tanker half.
func (b *batch) tankerHalves() error {
	var sigs [][]byte
	b.walk(provisional, func(e *entry) { sigs = append(sigs, e.prov.PublicSignatureKey) })
	if len(sigs) == 0 {
		return nil
	}
	rows, err := b.c.src.TankerProvisionalKeys(b.ctx, sigs)
	if err != nil {
		return fmt.Errorf("chain: read tanker provisional keys: %w", err)
	}
	byApp := make(map[string][]TankerProvisionalKey)
	for _, h := range rows {
		byApp[string(h.AppPublicSignatureKey)] = append(byApp[string(h.AppPublicSignatureKey)], h)
	}
	b.each(provisional, func(e *entry) {
		p := e.prov
		// The app half is the identity's own pair: ParseProvisional checked that its private
		// encryption key gives its public one, so it is not derived a second time.
		app := keys.EncryptionKeyPair{Public: [keys.KeySize]byte(p.PublicEncryptionKey), Private: [keys.KeySize]byte(p.PrivateEncryptionKey)}
		e.m = &Material{Kind: Provisional, ID: bytes.Clone(p.PublicSignatureKey)}
		for _, h := range byApp[string(p.PublicSignatureKey)] {
			if h.Target != p.Target || !bytes.Equal(h.HashedValue, p.HashedValue()) {
				e.err = invalid("the service's provisional keys for this identity belong to another email address or phone number")
				return
			}
			tanker, err := keys.EncryptionKeyPairFromPrivate(h.TankerPrivateEncryptionKey)
			if err != nil || !bytes.Equal(tanker.Public[:], h.TankerPublicEncryptionKey) || len(h.TankerPublicSignatureKey) != keys.KeySize {
				e.err = invalid("the service's half of this provisional identity is inconsistent in the dump")
				return
			}
			e.m.addProvisional(ProvisionalKeyPair{
				AppPublicSignatureKey:    [keys.KeySize]byte(p.PublicSignatureKey),
				TankerPublicSignatureKey: [keys.KeySize]byte(h.TankerPublicSignatureKey),
				App:                      app,
				Tanker:                   tanker,
			})
		}
	})
	return nil
}

// groups opens the group private keys sealed to the batch's user keys and
// provisional pairs, each checked against its group public key.
func (b *batch) groups() error {
	all := func(*entry) bool { return true }
	var userPubs, apps, tankers [][]byte
	b.walk(all, func(e *entry) {
		for _, k := range e.m.UserKeys {
			userPubs = append(userPubs, k.Public[:])
		}
		for _, p := range e.m.ProvisionalKeys {
			apps = append(apps, p.AppPublicSignatureKey[:])
			tankers = append(tankers, p.TankerPublicSignatureKey[:])
		}
	})
	byUser := make(map[string][]GroupMember)
	if len(userPubs) > 0 {
		rows, err := b.c.src.GroupMembers(b.ctx, userPubs)
		if err != nil {
			return fmt.Errorf("chain: read group members: %w", err)
		}
		for _, gm := range rows {
			byUser[string(gm.UserPublicEncryptionKey)] = append(byUser[string(gm.UserPublicEncryptionKey)], gm)
		}
	}
	byProv := make(map[string][]GroupProvisionalMember)
	if len(apps) > 0 {
		rows, err := b.c.src.GroupProvisionalMembers(b.ctx, apps, tankers)
		if err != nil {
			return fmt.Errorf("chain: read group provisional members: %w", err)
		}
		for _, gm := range rows {
			k := string(gm.AppPublicSignatureKey) + string(gm.TankerPublicSignatureKey)
			byProv[k] = append(byProv[k], gm)
		}
	}
	b.each(all, func(e *entry) { e.err = e.m.addGroupKeys(byUser, byProv) })
	return nil
}

// addGroupKeys opens the group keys of the material's member rows.
func (m *Material) addGroupKeys(byUser map[string][]GroupMember, byProv map[string][]GroupProvisionalMember) error {
	for _, uk := range m.UserKeys {
		for _, gm := range byUser[string(uk.Public[:])] {
			if len(gm.GroupPublicEncryptionKey) != keys.KeySize {
				return invalid("group %s has no valid public encryption key in the dump", groupName(gm.GroupID))
			}
			kp, err := keys.OpenSealedPrivateEncryptionKey(gm.SealedGroupPrivateEncryptionKey, uk, [keys.KeySize]byte(gm.GroupPublicEncryptionKey))
			if err != nil {
				return invalid("the key of group %s sealed to the user does not open or does not match the group's public key", groupName(gm.GroupID))
			}
			m.addGroup(kp)
		}
	}
	for _, pk := range m.ProvisionalKeys {
		for _, gm := range byProv[string(pk.AppPublicSignatureKey[:])+string(pk.TankerPublicSignatureKey[:])] {
			priv, err := keys.OpenTwoTimesSealedKey(gm.TwoTimesSealedGroupPrivateEncryptionKey, pk.App, pk.Tanker)
			if err != nil {
				return invalid("the key of group %s sealed to a provisional identity does not open", groupName(gm.GroupID))
			}
			kp, err := keys.EncryptionKeyPairFromPrivate(priv)
			if err != nil || !bytes.Equal(kp.Public[:], gm.GroupPublicEncryptionKey) {
				return invalid("the key of group %s sealed to a provisional identity does not match the group's public key", groupName(gm.GroupID))
			}
			m.addGroup(kp)
		}
	}
	return nil
}

func (m *Material) addProvisional(p ProvisionalKeyPair) {
	for _, q := range m.ProvisionalKeys {
		if q.AppPublicSignatureKey == p.AppPublicSignatureKey && q.TankerPublicSignatureKey == p.TankerPublicSignatureKey {
			return
		}
	}
	m.ProvisionalKeys = append(m.ProvisionalKeys, p)
}

func (m *Material) addGroup(kp keys.EncryptionKeyPair) {
	for _, g := range m.GroupKeys {
		if g.Public == kp.Public {
			return
		}
	}
	m.GroupKeys = append(m.GroupKeys, kp)
}

// groupName is the base64 group ID (a public key) for a reason.
func groupName(groupID []byte) string {
	return base64.StdEncoding.EncodeToString(groupID)
}
