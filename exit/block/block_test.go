package block

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVarint(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    uint64
		hex  string
	}{
		{"zero", 0, "00"},
		{"127", 127, "7f"},
		{"128", 128, "8001"},
		{"192", 192, "c001"},
		{"305", 305, "b102"},
		{"465", 465, "d103"},
		{"max", ^uint64(0), "ffffffffffffffffff01"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			enc := AppendVarint(nil, tc.v)
			require.Equal(t, tc.hex, hex.EncodeToString(enc))
			v, n, err := ReadVarint(enc)
			require.NoError(t, err)
			require.Equal(t, tc.v, v)
			require.Equal(t, len(enc), n)
		})
	}
	bad := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"unterminated", []byte{0x80}},
		{"non-minimal", []byte{0x80, 0x00}},
		{"overflow", bytes.Repeat([]byte{0xff}, 11)},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := ReadVarint(tc.in)
			require.Error(t, err)
		})
	}
}

// The framing of a serialized KeyPublishToUser (sdk-native
// test_actions_keypublishtouser.cpp): 01 00 <trustchain id> 08 80 01
// <payload 128> <author> <signature>.
func TestSerializedFraming(t *testing.T) {
	t.Parallel()
	a := &KeyPublishAction{Recipient: arr32("recipient user"), ResourceID: arr16("resource mac"), SealedKey: arr80("encrypted key...")}
	blk := New(Hash(arr32("trustchain id")), a, Hash(arr32("author")))
	blk.Signature = arr64("sig")
	want := bytes.Join([][]byte{
		{0x01, 0x00}, s("trustchain id", 32), {0x08, 0x80, 0x01},
		s("recipient user", 32), s("resource mac", 16), s("encrypted key...", 80),
		s("author", 32), s("sig", 64),
	}, nil)
	require.Equal(t, want, blk.Serialize())

	// UserGroupCreation v1: nature 0a, payload size d1 03 (465).
	g := hashVectors()[8].action()
	raw := New(Hash(arr32("trustchain id")), g, Hash(arr32("author"))).Serialize()
	require.Equal(t, []byte{0x0a, 0xd1, 0x03}, raw[34:37])
	require.Len(t, raw, 2+32+3+465+32+64)
}

// Natures without a hash vector still round-trip field by field.
func TestRoundTripOtherNatures(t *testing.T) {
	t.Parallel()
	prov3 := []GroupProvisionalMember{{
		AppPublicSignatureKey: arr32("app sig"), TankerPublicSignatureKey: arr32("tanker sig"),
		AppPublicEncryptionKey: arr32("app enc"), TankerPublicEncryptionKey: arr32("tanker enc"),
		TwoTimesSealedPrivateEncryptionKey: arr128("twice"),
	}}
	members2 := []GroupMember{{UserID: arr32("u"), UserPublicEncryptionKey: arr32("k"), SealedPrivateEncryptionKey: arr80("s")}}
	tests := []struct {
		name   string
		action Action
		nature Nature
		size   int
	}{
		{"3 key publish to device", &KeyPublishToDeviceAction{Recipient: arr32("dev"), ResourceID: arr16("rid"), Key: bytes.Repeat([]byte{1}, 72)}, KeyPublishToDevice, 32 + 16 + 1 + 72},
		{"4 device revocation v1", &DeviceRevocationAction{Version: 1, DeviceID: arr32("dev")}, DeviceRevocationV1, 32},
		{"5 user reset", &UserResetAction{Raw: []byte("opaque")}, UserReset, 6},
		{"9 device revocation v2", &DeviceRevocationAction{
			Version: 2, DeviceID: arr32("dev"), PublicEncryptionKey: arr32("new"), PreviousPublicEncryptionKey: arr32("old"),
			SealedPreviousPrivateEncryptionKey: arr80("prev"),
			SealedUserPrivateKeysForDevices:    []DeviceSealedUserKey{{DeviceID: arr32("d1"), SealedKey: arr80("k1")}, {DeviceID: arr32("d2"), SealedKey: arr80("k2")}},
		}, DeviceRevocationV2, 32 + 32 + 32 + 80 + 1 + 2*112},
		{"7 device creation v3 not ghost", func() Action { a := deviceV1Fields(); a.Version = 3; return &a }(), DeviceCreationV3, 305},
		{"16 user group addition v2", &UserGroupAdditionAction{Version: 2, GroupID: arr32("g"), PreviousGroupBlockHash: arr32("p"), Members: members2,
			ProvisionalMembers: []GroupProvisionalMember{{AppPublicSignatureKey: arr32("a"), TankerPublicSignatureKey: arr32("t"), TwoTimesSealedPrivateEncryptionKey: arr128("x")}},
			SelfSignature:      arr64("sig")}, UserGroupAdditionV2, 64 + 1 + 144 + 1 + 192 + 64},
		{"17 user group creation v3", &UserGroupCreationAction{Version: 3, PublicSignatureKey: arr32("s"), PublicEncryptionKey: arr32("e"),
			SealedPrivateSignatureKey: arr112("p"), Members: members2, ProvisionalMembers: prov3, SelfSignature: arr64("sig")}, UserGroupCreationV3, 176 + 1 + 144 + 1 + 256 + 64},
		{"18 user group addition v3", &UserGroupAdditionAction{Version: 3, GroupID: arr32("g"), PreviousGroupBlockHash: arr32("p"), Members: members2,
			ProvisionalMembers: prov3, SelfSignature: arr64("sig")}, UserGroupAdditionV3, 64 + 1 + 144 + 1 + 256 + 64},
		{"15 user group creation v2 empty lists", &UserGroupCreationAction{Version: 2, Members: []GroupMember{}, ProvisionalMembers: []GroupProvisionalMember{}}, UserGroupCreationV2, 176 + 2 + 64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.nature, tc.action.Nature())
			payload := tc.action.AppendPayload(nil)
			require.Len(t, payload, tc.size)
			back, err := ParsePayload(tc.nature, payload)
			require.NoError(t, err)
			require.Equal(t, tc.action, back)
		})
	}
}

func TestSignature(t *testing.T) {
	t.Parallel()
	pub, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	blk := New(Hash{1}, &KeyPublishAction{Recipient: arr32("r")}, Hash{2})
	blk.Sign(priv)
	require.NoError(t, blk.VerifySignature(pub))

	parsed, err := Parse(blk.Serialize())
	require.NoError(t, err)
	require.NoError(t, parsed.VerifySignature(pub), "signature survives serialization")

	parsed.Payload[0] ^= 1
	require.ErrorIs(t, parsed.VerifySignature(pub), ErrInvalidSignature)
	other, _, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	require.ErrorIs(t, blk.VerifySignature(other), ErrInvalidSignature)
	require.ErrorIs(t, blk.VerifySignature(pub[:5]), ErrInvalidSignature)
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	good := New(Hash{1}, &KeyPublishAction{}, Hash{2}).Serialize()
	withPayload := func(n Nature, payload []byte) []byte {
		return (&Block{Nature: n, Payload: payload}).Serialize()
	}
	tests := []struct {
		name string
		in   []byte
		err  error
	}{
		{"empty", nil, ErrTruncated},
		{"version 2", append([]byte{2}, good[1:]...), ErrMalformed},
		{"cut in signature", good[:len(good)-1], ErrTruncated},
		{"trailing byte", append(bytes.Clone(good), 0), ErrMalformed},
		{"payload size beyond input", append(append(bytes.Clone(good[:34]), 0x08, 0xff, 0xff, 0xff, 0xff, 0x0f), make([]byte, 10)...), ErrTruncated},
		{"unknown nature", withPayload(19, make([]byte, 32)), ErrUnknownNature},
		{"payload too short", withPayload(KeyPublishToUser, make([]byte, 127)), ErrTruncated},
		{"payload too long", withPayload(KeyPublishToUser, make([]byte, 129)), ErrMalformed},
		{"ghost flag 2", withPayload(DeviceCreationV3, append(make([]byte, 304), 2)), ErrMalformed},
		{"huge member count", withPayload(UserGroupCreationV1, append(make([]byte, 176), 0xff, 0xff, 0xff, 0xff, 0x0f)), ErrTruncated},
		{"huge device key length", withPayload(KeyPublishToDevice, append(make([]byte, 48), 0xff, 0xff, 0xff, 0xff, 0x0f)), ErrTruncated},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			blk, err := Parse(tc.in)
			if err == nil {
				_, err = blk.Action()
			}
			require.ErrorIs(t, err, tc.err)
		})
	}
}
