package block

import "fmt"

// Sizes of the crypto containers found in payloads (exit/FORMATS.md).
const (
	PublicKeySize           = 32
	SealedKeySize           = 80  // sealed 32-byte key
	SealedSignatureKeySize  = 112 // sealed 64-byte Ed25519 private key
	TwoTimesSealedKeySize   = 128 // sealed twice
	SealedClaimKeysSize     = 112 // sealed app || tanker private keys
	ResourceIDSize          = 16
	UserIDSize              = 32
	memberV1Size            = PublicKeySize + SealedKeySize
	memberV2Size            = UserIDSize + memberV1Size
	provisionalMemberV2Size = 2*PublicKeySize + TwoTimesSealedKeySize
	provisionalMemberV3Size = 4*PublicKeySize + TwoTimesSealedKeySize
	deviceSealedUserKeySize = HashSize + SealedKeySize
)

// Action is the decoded payload of a block.
type Action interface {
	// Nature returns the block nature that carries this payload.
	Nature() Nature
	// AppendPayload appends the serialized payload to dst.
	AppendPayload(dst []byte) []byte
}

// ParsePayload decodes the payload of a block of nature n.
func ParsePayload(n Nature, payload []byte) (Action, error) {
	r := &reader{b: payload}
	var a Action
	switch n {
	case TrustchainCreation:
		a = parseTrustchainCreation(r)
	case DeviceCreationV1, DeviceCreationV2, DeviceCreationV3:
		a = parseDeviceCreation(r, n)
	case KeyPublishToDevice:
		a = parseKeyPublishToDevice(r)
	case DeviceRevocationV1, DeviceRevocationV2:
		a = parseDeviceRevocation(r, n)
	case UserReset:
		a = &UserResetAction{Raw: append([]byte(nil), r.take(len(payload))...)}
	case KeyPublishToUser, KeyPublishToUserGroup:
		a = parseKeyPublish(r, n)
	case KeyPublishToProvisionalUser:
		a = parseKeyPublishToProvisionalUser(r)
	case ProvisionalIdentityClaim:
		a = parseProvisionalIdentityClaim(r)
	case UserGroupCreationV1, UserGroupCreationV2, UserGroupCreationV3:
		a = parseUserGroupCreation(r, n)
	case UserGroupAdditionV1, UserGroupAdditionV2, UserGroupAdditionV3:
		a = parseUserGroupAddition(r, n)
	default:
		return nil, fmt.Errorf("parse payload: %w: %d", ErrUnknownNature, uint64(n))
	}
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("parse %s payload: %w", n, err)
	}
	return a, nil
}

// TrustchainCreationAction is the root block payload (nature 1).
type TrustchainCreationAction struct {
	PublicSignatureKey [PublicKeySize]byte
}

// Nature returns TrustchainCreation.
func (*TrustchainCreationAction) Nature() Nature { return TrustchainCreation }

// AppendPayload appends the public signature key.
func (a *TrustchainCreationAction) AppendPayload(dst []byte) []byte {
	return append(dst, a.PublicSignatureKey[:]...)
}

func parseTrustchainCreation(r *reader) *TrustchainCreationAction {
	a := &TrustchainCreationAction{}
	r.fixed(a.PublicSignatureKey[:])
	return a
}

// DeviceCreationAction is a device creation payload (natures 2, 6 and 7).
type DeviceCreationAction struct {
	// Version is 1, 2 or 3 (natures 2, 6, 7).
	Version int
	// LastReset is present in version 2 only (must be zero).
	LastReset                   Hash
	EphemeralPublicSignatureKey [PublicKeySize]byte
	UserID                      [UserIDSize]byte
	DelegationSignature         [SignatureSize]byte
	PublicSignatureKey          [PublicKeySize]byte
	PublicEncryptionKey         [PublicKeySize]byte
	// Version 3 only: the user key pair and the ghost device flag.
	UserPublicEncryptionKey        [PublicKeySize]byte
	SealedUserPrivateEncryptionKey [SealedKeySize]byte
	IsGhostDevice                  bool
}

// Nature returns the nature matching Version.
func (a *DeviceCreationAction) Nature() Nature {
	switch a.Version {
	case 2:
		return DeviceCreationV2
	case 3:
		return DeviceCreationV3
	}
	return DeviceCreationV1
}

// AppendPayload appends the fields of the version.
func (a *DeviceCreationAction) AppendPayload(dst []byte) []byte {
	if a.Version == 2 {
		dst = append(dst, a.LastReset[:]...)
	}
	dst = append(dst, a.EphemeralPublicSignatureKey[:]...)
	dst = append(dst, a.UserID[:]...)
	dst = append(dst, a.DelegationSignature[:]...)
	dst = append(dst, a.PublicSignatureKey[:]...)
	dst = append(dst, a.PublicEncryptionKey[:]...)
	if a.Version == 3 {
		dst = append(dst, a.UserPublicEncryptionKey[:]...)
		dst = append(dst, a.SealedUserPrivateEncryptionKey[:]...)
		dst = append(dst, boolByte(a.IsGhostDevice))
	}
	return dst
}

func boolByte(b bool) byte {
	if b {
		return 1
	}
	return 0
}

func parseDeviceCreation(r *reader, n Nature) *DeviceCreationAction {
	a := &DeviceCreationAction{Version: 1}
	switch n {
	case DeviceCreationV2:
		a.Version = 2
		r.fixed(a.LastReset[:])
	case DeviceCreationV3:
		a.Version = 3
	}
	r.fixed(a.EphemeralPublicSignatureKey[:])
	r.fixed(a.UserID[:])
	r.fixed(a.DelegationSignature[:])
	r.fixed(a.PublicSignatureKey[:])
	r.fixed(a.PublicEncryptionKey[:])
	if a.Version == 3 {
		r.fixed(a.UserPublicEncryptionKey[:])
		r.fixed(a.SealedUserPrivateEncryptionKey[:])
		a.IsGhostDevice = r.flag()
	}
	return a
}

// KeyPublishToDeviceAction is the legacy key publish to a device (nature
// 3). Key is a crypto_box ciphertext with its nonce appended, stored with
// a varint length prefix.
type KeyPublishToDeviceAction struct {
	Recipient  Hash
	ResourceID [ResourceIDSize]byte
	Key        []byte
}

// Nature returns KeyPublishToDevice.
func (*KeyPublishToDeviceAction) Nature() Nature { return KeyPublishToDevice }

// AppendPayload appends recipient, resource ID and the length-prefixed key.
func (a *KeyPublishToDeviceAction) AppendPayload(dst []byte) []byte {
	dst = append(dst, a.Recipient[:]...)
	dst = append(dst, a.ResourceID[:]...)
	dst = AppendVarint(dst, uint64(len(a.Key)))
	return append(dst, a.Key...)
}

func parseKeyPublishToDevice(r *reader) *KeyPublishToDeviceAction {
	a := &KeyPublishToDeviceAction{}
	r.fixed(a.Recipient[:])
	r.fixed(a.ResourceID[:])
	n := r.count(1)
	a.Key = append([]byte{}, r.take(n)...)
	return a
}

// DeviceSealedUserKey is a new user private key sealed for one device.
type DeviceSealedUserKey struct {
	DeviceID  Hash
	SealedKey [SealedKeySize]byte
}

// DeviceRevocationAction is a device revocation (natures 4 and 9).
type DeviceRevocationAction struct {
	// Version is 1 or 2 (natures 4, 9).
	Version  int
	DeviceID Hash
	// Version 2 only: the rotated user key.
	PublicEncryptionKey                [PublicKeySize]byte
	PreviousPublicEncryptionKey        [PublicKeySize]byte
	SealedPreviousPrivateEncryptionKey [SealedKeySize]byte
	SealedUserPrivateKeysForDevices    []DeviceSealedUserKey
}

// Nature returns the nature matching Version.
func (a *DeviceRevocationAction) Nature() Nature {
	if a.Version == 2 {
		return DeviceRevocationV2
	}
	return DeviceRevocationV1
}

// AppendPayload appends the fields of the version.
func (a *DeviceRevocationAction) AppendPayload(dst []byte) []byte {
	dst = append(dst, a.DeviceID[:]...)
	if a.Version != 2 {
		return dst
	}
	dst = append(dst, a.PublicEncryptionKey[:]...)
	dst = append(dst, a.PreviousPublicEncryptionKey[:]...)
	dst = append(dst, a.SealedPreviousPrivateEncryptionKey[:]...)
	dst = AppendVarint(dst, uint64(len(a.SealedUserPrivateKeysForDevices)))
	for _, k := range a.SealedUserPrivateKeysForDevices {
		dst = append(dst, k.DeviceID[:]...)
		dst = append(dst, k.SealedKey[:]...)
	}
	return dst
}

func parseDeviceRevocation(r *reader, n Nature) *DeviceRevocationAction {
	a := &DeviceRevocationAction{Version: 1}
	r.fixed(a.DeviceID[:])
	if n != DeviceRevocationV2 {
		return a
	}
	a.Version = 2
	r.fixed(a.PublicEncryptionKey[:])
	r.fixed(a.PreviousPublicEncryptionKey[:])
	r.fixed(a.SealedPreviousPrivateEncryptionKey[:])
	count := r.count(deviceSealedUserKeySize)
	a.SealedUserPrivateKeysForDevices = make([]DeviceSealedUserKey, count)
	for i := range a.SealedUserPrivateKeysForDevices {
		k := &a.SealedUserPrivateKeysForDevices[i]
		r.fixed(k.DeviceID[:])
		r.fixed(k.SealedKey[:])
	}
	return a
}

// UserResetAction is the legacy user reset (nature 5), whose payload is
// kept opaque.
type UserResetAction struct {
	Raw []byte
}

// Nature returns UserReset.
func (*UserResetAction) Nature() Nature { return UserReset }

// AppendPayload appends the raw payload.
func (a *UserResetAction) AppendPayload(dst []byte) []byte { return append(dst, a.Raw...) }
