package chain

import (
	"bytes"
	"context"
	"slices"

	"idvault/exit/block"
	"idvault/exit/encryption"
	"idvault/exit/keys"
)

// memSource is an in-memory Source: the dump's rows of one app plus a
// keyring filled by store.
type memSource struct {
	users       map[string]User
	devices     []memDevice
	claims      map[string][]Claim
	tankerKeys  []TankerProvisionalKey
	groups      map[string][]byte // group ID -> public encryption key
	members     []memMember
	provMembers []memProvMember
	publishes   map[encryption.SimpleID][]KeyPublish

	userKeys  map[[32]byte]keys.EncryptionKeyPair
	groupKeys map[[32]byte]keys.EncryptionKeyPair
	provKeys  map[[64]byte]ProvisionalKeyPair
}

type memDevice struct {
	userID, deviceID, publicSignatureKey []byte
	ghost                                bool
	action                               *block.DeviceCreationAction
}

type memMember struct {
	groupID []byte
	action  block.GroupMember
}

type memProvMember struct {
	groupID []byte
	action  block.GroupProvisionalMember
}

func newMemSource() *memSource {
	return &memSource{
		users:     map[string]User{},
		claims:    map[string][]Claim{},
		groups:    map[string][]byte{},
		publishes: map[encryption.SimpleID][]KeyPublish{},
		userKeys:  map[[32]byte]keys.EncryptionKeyPair{},
		groupKeys: map[[32]byte]keys.EncryptionKeyPair{},
		provKeys:  map[[64]byte]ProvisionalKeyPair{},
	}
}

// store keeps imported material, as exitdb does in its exit_* tables.
func (s *memSource) store(m *Material) {
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

func (s *memSource) User(_ context.Context, userID []byte) (User, error) {
	u, ok := s.users[string(userID)]
	if !ok {
		return User{}, ErrNotFound
	}
	return u, nil
}

func (s *memSource) GhostDevice(_ context.Context, userID, pub []byte) (Device, error) {
	for _, d := range s.devices {
		if d.ghost && bytes.Equal(d.userID, userID) && bytes.Equal(d.publicSignatureKey, pub) {
			return Device{
				DeviceID:                       d.deviceID,
				PublicEncryptionKey:            d.action.PublicEncryptionKey[:],
				UserPublicEncryptionKey:        d.action.UserPublicEncryptionKey[:],
				SealedUserPrivateEncryptionKey: d.action.SealedUserPrivateEncryptionKey[:],
			}, nil
		}
	}
	return Device{}, ErrNotFound
}

func (s *memSource) Claims(_ context.Context, userID []byte) ([]Claim, error) {
	return s.claims[string(userID)], nil
}

func (s *memSource) TankerProvisionalKeys(_ context.Context, app []byte) ([]TankerProvisionalKey, error) {
	var out []TankerProvisionalKey
	for _, k := range s.tankerKeys {
		if bytes.Equal(k.AppPublicSignatureKey, app) {
			out = append(out, k)
		}
	}
	return out, nil
}

func (s *memSource) GroupMembers(_ context.Context, userPub []byte) ([]GroupMember, error) {
	var out []GroupMember
	for _, m := range s.members {
		if bytes.Equal(m.action.UserPublicEncryptionKey[:], userPub) {
			out = append(out, GroupMember{
				GroupID:                         m.groupID,
				GroupPublicEncryptionKey:        s.groups[string(m.groupID)],
				UserPublicEncryptionKey:         m.action.UserPublicEncryptionKey[:],
				SealedGroupPrivateEncryptionKey: m.action.SealedPrivateEncryptionKey[:],
			})
		}
	}
	return out, nil
}

func (s *memSource) GroupProvisionalMembers(_ context.Context, app, tanker []byte) ([]GroupProvisionalMember, error) {
	var out []GroupProvisionalMember
	for _, m := range s.provMembers {
		if bytes.Equal(m.action.AppPublicSignatureKey[:], app) && bytes.Equal(m.action.TankerPublicSignatureKey[:], tanker) {
			out = append(out, GroupProvisionalMember{
				GroupID:                                 m.groupID,
				GroupPublicEncryptionKey:                s.groups[string(m.groupID)],
				AppPublicSignatureKey:                   app,
				TankerPublicSignatureKey:                tanker,
				TwoTimesSealedGroupPrivateEncryptionKey: m.action.TwoTimesSealedPrivateEncryptionKey[:],
			})
		}
	}
	return out, nil
}

func (s *memSource) KeyPublishes(_ context.Context, id encryption.SimpleID) ([]KeyPublish, error) {
	return s.publishes[id], nil
}

func (s *memSource) DeviceUser(_ context.Context, deviceID []byte) ([]byte, error) {
	for _, d := range s.devices {
		if bytes.Equal(d.deviceID, deviceID) {
			return d.userID, nil
		}
	}
	return nil, ErrNotFound
}

func (s *memSource) UserKey(_ context.Context, pub []byte) (keys.EncryptionKeyPair, error) {
	if k, ok := s.userKeys[[32]byte(pub)]; ok {
		return k, nil
	}
	return keys.EncryptionKeyPair{}, ErrNotFound
}

func (s *memSource) GroupKey(_ context.Context, pub []byte) (keys.EncryptionKeyPair, error) {
	if k, ok := s.groupKeys[[32]byte(pub)]; ok {
		return k, nil
	}
	return keys.EncryptionKeyPair{}, ErrNotFound
}

func (s *memSource) ProvisionalKey(_ context.Context, app, tanker []byte) (ProvisionalKeyPair, error) {
	if k, ok := s.provKeys[[64]byte(slices.Concat(app, tanker))]; ok {
		return k, nil
	}
	return ProvisionalKeyPair{}, ErrNotFound
}
