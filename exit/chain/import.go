package chain

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"

	"idvault/app/identity"
	"idvault/exit/keys"
)

// Import parses a private identity (permanent or provisional, any Tanker
// library's field order) and follows the chain to the key pairs it gives.
// Errors due to the identity or to what the dump holds for it are
// *InvalidIdentityError; others come from the Source.
func (c *Chain) Import(ctx context.Context, privateIdentity string) (*Material, error) {
	p, err := identity.ParsePermanent(privateIdentity, c.appID, c.appPublicKey)
	if err == nil {
		return c.importPermanent(ctx, p)
	}
	if !errors.Is(err, identity.ErrUnsupportedTarget) {
		return nil, parseFailure(err)
	}
	pp, err := identity.ParseProvisional(privateIdentity, c.appID)
	if err == nil {
		return c.importProvisional(ctx, pp)
	}
	if errors.Is(err, identity.ErrUnsupportedTarget) {
		return nil, invalid("not a private identity: its target is neither a user nor an email or phone number " +
			"(public provisional identities cannot be imported)")
	}
	return nil, parseFailure(err)
}

// parseFailure turns an app/identity parse error into a reason. The
// identity parser's own messages are not reused: a sentence per cause is
// clearer, and none can echo the input.
func parseFailure(err error) error {
	switch {
	case errors.Is(err, identity.ErrAppMismatch), errors.Is(err, identity.ErrInvalidAppID):
		// The chain's app, not the entry, is wrong.
		return fmt.Errorf("chain: app ID and app public key do not match")
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

func (c *Chain) importPermanent(ctx context.Context, p *identity.Permanent) (*Material, error) {
	u, err := c.src.User(ctx, p.UserID)
	if errors.Is(err, ErrNotFound) {
		return nil, invalid("the user is not in the dump")
	}
	if err != nil {
		return nil, fmt.Errorf("chain: read user: %w", err)
	}
	if u.EncryptedVerificationKey == nil {
		return nil, invalid("the dump holds no verification key for the user " +
			"(the user keeps it, or verifies with an end-to-end passphrase only)")
	}
	vk, err := keys.DecryptVerificationKey(u.EncryptedVerificationKey, p.UserSecret)
	if err != nil {
		return nil, invalid("the user's stored verification key does not decrypt with the identity's user secret")
	}
	ghost, err := vk.EncryptionKeyPair()
	if err != nil {
		return nil, invalid("the user's verification key holds an invalid encryption key")
	}
	dev, err := c.src.GhostDevice(ctx, p.UserID, vk.PublicSignatureKey())
	if errors.Is(err, ErrNotFound) {
		return nil, invalid("the verification key matches no ghost device of the user")
	}
	if err != nil {
		return nil, fmt.Errorf("chain: read ghost device: %w", err)
	}
	if !bytes.Equal(dev.PublicEncryptionKey, ghost.Public[:]) {
		return nil, invalid("the verification key does not match the ghost device's encryption key")
	}
	if len(dev.UserPublicEncryptionKey) != keys.KeySize || dev.SealedUserPrivateEncryptionKey == nil {
		return nil, invalid("the user's ghost device carries no user key")
	}
	userKey, err := keys.OpenSealedPrivateEncryptionKey(dev.SealedUserPrivateEncryptionKey, ghost, [keys.KeySize]byte(dev.UserPublicEncryptionKey))
	if err != nil {
		return nil, invalid("the ghost device's sealed user key does not open with the verification key or does not match the user public key")
	}
	m := &Material{Kind: Permanent, ID: bytes.Clone(p.UserID), UserKeys: []keys.EncryptionKeyPair{userKey}}

	claims, err := c.src.Claims(ctx, p.UserID)
	if err != nil {
		return nil, fmt.Errorf("chain: read provisional identity claims: %w", err)
	}
	for _, cl := range claims {
		if !bytes.Equal(cl.UserPublicEncryptionKey, userKey.Public[:]) ||
			len(cl.AppPublicSignatureKey) != keys.KeySize || len(cl.TankerPublicSignatureKey) != keys.KeySize {
			return nil, invalid("a provisional identity claim of the user is not sealed to the user key")
		}
		app, tanker, err := keys.OpenClaimKeys(cl.SealedPrivateEncryptionKeys, userKey)
		if err != nil {
			return nil, invalid("a provisional identity claim of the user does not open with the user key")
		}
		m.addProvisional(ProvisionalKeyPair{
			AppPublicSignatureKey:    [keys.KeySize]byte(cl.AppPublicSignatureKey),
			TankerPublicSignatureKey: [keys.KeySize]byte(cl.TankerPublicSignatureKey),
			App:                      app,
			Tanker:                   tanker,
		})
	}
	if err := c.addGroupKeys(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

func (c *Chain) importProvisional(ctx context.Context, p *identity.Provisional) (*Material, error) {
	app, err := keys.EncryptionKeyPairFromPrivate(p.PrivateEncryptionKey)
	if err != nil {
		return nil, invalid("the identity's private encryption key is invalid")
	}
	m := &Material{Kind: Provisional, ID: bytes.Clone(p.PublicSignatureKey)}
	halves, err := c.src.TankerProvisionalKeys(ctx, p.PublicSignatureKey)
	if err != nil {
		return nil, fmt.Errorf("chain: read tanker provisional keys: %w", err)
	}
	for _, h := range halves {
		if h.Target != p.Target || !bytes.Equal(h.HashedValue, p.HashedValue()) {
			return nil, invalid("the service's provisional keys for this identity belong to another email address or phone number")
		}
		tanker, err := keys.EncryptionKeyPairFromPrivate(h.TankerPrivateEncryptionKey)
		if err != nil || !bytes.Equal(tanker.Public[:], h.TankerPublicEncryptionKey) || len(h.TankerPublicSignatureKey) != keys.KeySize {
			return nil, invalid("the service's half of this provisional identity is inconsistent in the dump")
		}
		m.addProvisional(ProvisionalKeyPair{
			AppPublicSignatureKey:    [keys.KeySize]byte(p.PublicSignatureKey),
			TankerPublicSignatureKey: [keys.KeySize]byte(h.TankerPublicSignatureKey),
			App:                      app,
			Tanker:                   tanker,
		})
	}
	if err := c.addGroupKeys(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
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

// addGroupKeys opens the group private keys sealed to the material's user
// keys and provisional pairs, each checked against its group public key.
func (c *Chain) addGroupKeys(ctx context.Context, m *Material) error {
	for _, uk := range m.UserKeys {
		members, err := c.src.GroupMembers(ctx, uk.Public[:])
		if err != nil {
			return fmt.Errorf("chain: read group members: %w", err)
		}
		for _, gm := range members {
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
		members, err := c.src.GroupProvisionalMembers(ctx, pk.AppPublicSignatureKey[:], pk.TankerPublicSignatureKey[:])
		if err != nil {
			return fmt.Errorf("chain: read group provisional members: %w", err)
		}
		for _, gm := range members {
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

// groupName is the base64 group ID (a public key) for a reason.
func groupName(groupID []byte) string {
	return base64.StdEncoding.EncodeToString(groupID)
}
