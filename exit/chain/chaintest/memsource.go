package chaintest

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/chain"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/keys"
)

// MemSource serves a Dump's rows and a keyring filled by Store as a
// chain.Source. It is safe for concurrent use.
type MemSource struct {
	d *Dump

	mu        sync.Mutex
	userKeys  map[[32]byte]keys.EncryptionKeyPair
	groupKeys map[[32]byte]keys.EncryptionKeyPair
	provKeys  map[[64]byte]chain.ProvisionalKeyPair
	users     map[[32]byte]bool // imported permanent identities
}

var _ chain.Source = (*MemSource)(nil)

// NewMemSource serves d, read at each call (later additions are seen).
func NewMemSource(d *Dump) *MemSource {
	return &MemSource{
		d:         d,
		userKeys:  map[[32]byte]keys.EncryptionKeyPair{},
		groupKeys: map[[32]byte]keys.EncryptionKeyPair{},
		provKeys:  map[[64]byte]chain.ProvisionalKeyPair{},
		users:     map[[32]byte]bool{},
	}
}

// Store keeps imported material, as exitdb does in its exit_* tables.
func (s *MemSource) Store(m *chain.Material) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Kind == chain.Permanent && len(m.ID) == 32 {
		s.users[[32]byte(m.ID)] = true
	}
	for _, k := range m.UserKeys {
		s.userKeys[k.Public] = k
	}
	for _, k := range m.GroupKeys {
		s.groupKeys[k.Public] = k
	}
	for _, p := range m.ProvisionalKeys {
		s.provKeys[[64]byte(slices.Concat(p.AppPublicSignatureKey[:], p.TankerPublicSignatureKey[:]))] = p
	}
}

// has reports whether b is one of set.
func has(set [][]byte, b []byte) bool {
	for _, x := range set {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

// Users implements chain.Dump.
func (s *MemSource) Users(_ context.Context, userIDs [][]byte) ([]chain.User, error) {
	var out []chain.User
	for _, u := range s.d.Users {
		if has(userIDs, u.UserID) {
			out = append(out, chain.User{UserID: u.UserID, EncryptedVerificationKey: u.EncryptedVerificationKey})
		}
	}
	return out, nil
}

// GhostDevices implements chain.Dump.
func (s *MemSource) GhostDevices(_ context.Context, userIDs, sigs [][]byte) ([]chain.Device, error) {
	var out []chain.Device
	for _, d := range s.d.Devices {
		for i := range userIDs {
			if d.IsGhostDevice && bytes.Equal(d.UserID, userIDs[i]) && bytes.Equal(d.PublicSignatureKey, sigs[i]) {
				out = append(out, chain.Device{
					UserID:                         d.UserID,
					PublicSignatureKey:             d.PublicSignatureKey,
					DeviceID:                       d.DeviceID,
					PublicEncryptionKey:            d.PublicEncryptionKey,
					UserPublicEncryptionKey:        d.UserPublicEncryptionKey,
					SealedUserPrivateEncryptionKey: d.SealedUserPrivateEncryptionKey,
				})
				break
			}
		}
	}
	return out, nil
}

// Claims implements chain.Dump.
func (s *MemSource) Claims(_ context.Context, userIDs [][]byte) ([]chain.Claim, error) {
	var out []chain.Claim
	for _, c := range s.d.Claims {
		if has(userIDs, c.UserID) {
			out = append(out, chain.Claim{
				UserID:                c.UserID,
				AppPublicSignatureKey: c.AppPublicSignatureKey, TankerPublicSignatureKey: c.TankerPublicSignatureKey,
				UserPublicEncryptionKey: c.UserPublicEncryptionKey, SealedPrivateEncryptionKeys: c.SealedPrivateEncryptionKeys,
			})
		}
	}
	return out, nil
}

// TankerProvisionalKeys implements chain.Dump.
func (s *MemSource) TankerProvisionalKeys(_ context.Context, apps [][]byte) ([]chain.TankerProvisionalKey, error) {
	var out []chain.TankerProvisionalKey
	for _, k := range s.d.TankerProvisionalKeys {
		if has(apps, k.AppPublicSignatureKey) {
			out = append(out, chain.TankerProvisionalKey{
				Target: k.Target, HashedValue: k.HashedValue,
				AppPublicSignatureKey: k.AppPublicSignatureKey, TankerPublicSignatureKey: k.TankerPublicSignatureKey,
				TankerPublicEncryptionKey: k.TankerPublicEncryptionKey, TankerPrivateEncryptionKey: k.TankerPrivateEncryptionKey,
			})
		}
	}
	return out, nil
}

// groupKey returns the public encryption key of a group's creation row.
func (s *MemSource) groupKey(groupID []byte) []byte {
	for _, g := range s.d.Groups {
		if bytes.Equal(g.GroupID, groupID) {
			return g.PublicEncryptionKey
		}
	}
	return nil
}

// GroupMembers implements chain.Dump.
func (s *MemSource) GroupMembers(_ context.Context, userPubs [][]byte) ([]chain.GroupMember, error) {
	var out []chain.GroupMember
	for _, m := range s.d.Members {
		if has(userPubs, m.UserPublicEncryptionKey) {
			out = append(out, chain.GroupMember{
				GroupID: m.GroupID, GroupPublicEncryptionKey: s.groupKey(m.GroupID),
				UserPublicEncryptionKey: m.UserPublicEncryptionKey, SealedGroupPrivateEncryptionKey: m.SealedGroupPrivateEncryptionKey,
			})
		}
	}
	return out, nil
}

// GroupProvisionalMembers implements chain.Dump.
func (s *MemSource) GroupProvisionalMembers(_ context.Context, apps, tankers [][]byte) ([]chain.GroupProvisionalMember, error) {
	var out []chain.GroupProvisionalMember
	for _, m := range s.d.ProvisionalMembers {
		for i := range apps {
			if bytes.Equal(m.AppPublicSignatureKey, apps[i]) && bytes.Equal(m.TankerPublicSignatureKey, tankers[i]) {
				out = append(out, chain.GroupProvisionalMember{
					GroupID: m.GroupID, GroupPublicEncryptionKey: s.groupKey(m.GroupID),
					AppPublicSignatureKey: m.AppPublicSignatureKey, TankerPublicSignatureKey: m.TankerPublicSignatureKey,
					TwoTimesSealedGroupPrivateEncryptionKey: m.TwoTimesSealedGroupPrivateEncryptionKey,
				})
				break
			}
		}
	}
	return out, nil
}

// KeyPublishes implements chain.Dump.
func (s *MemSource) KeyPublishes(_ context.Context, id encryption.SimpleID) ([]chain.KeyPublish, error) {
	var out []chain.KeyPublish
	for _, k := range s.d.KeyPublishes {
		if bytes.Equal(k.ResourceID, id[:]) {
			out = append(out, chain.KeyPublish{Nature: block.Nature(k.Nature), Recipient: k.Recipient, SealedKey: k.SealedKey, Author: k.Author})
		}
	}
	return out, nil
}

// DeviceUser implements chain.Dump.
func (s *MemSource) DeviceUser(_ context.Context, deviceID []byte) ([]byte, error) {
	for _, d := range s.d.Devices {
		if bytes.Equal(d.DeviceID, deviceID) {
			return d.UserID, nil
		}
	}
	return nil, chain.ErrNotFound
}

// UserKey implements chain.Keyring.
func (s *MemSource) UserKey(_ context.Context, pub []byte) (keys.EncryptionKeyPair, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.userKeys[[32]byte(pub)]; ok {
		return k, nil
	}
	return keys.EncryptionKeyPair{}, chain.ErrNotFound
}

// GroupKey implements chain.Keyring.
func (s *MemSource) GroupKey(_ context.Context, pub []byte) (keys.EncryptionKeyPair, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.groupKeys[[32]byte(pub)]; ok {
		return k, nil
	}
	return keys.EncryptionKeyPair{}, chain.ErrNotFound
}

// ProvisionalKey implements chain.Keyring.
func (s *MemSource) ProvisionalKey(_ context.Context, app, tanker []byte) (chain.ProvisionalKeyPair, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if k, ok := s.provKeys[[64]byte(slices.Concat(app, tanker))]; ok {
		return k, nil
	}
	return chain.ProvisionalKeyPair{}, chain.ErrNotFound
}

// UserImported implements chain.Keyring.
func (s *MemSource) UserImported(_ context.Context, userID []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(userID) == 32 && s.users[[32]byte(userID)], nil
}
