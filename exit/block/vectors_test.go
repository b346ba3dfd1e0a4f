package block

import (
	"encoding/base64"
	"encoding/hex"
	"testing"

	"github.com/stretchr/testify/require"
)

// s returns the ASCII string right-padded with zeros to n bytes, as the
// sdk-native test helpers build their inputs.
func s(str string, n int) []byte {
	b := make([]byte, n)
	copy(b, str)
	return b
}

func arr32(str string) (a [32]byte)   { copy(a[:], str); return }
func arr64(str string) (a [64]byte)   { copy(a[:], str); return }
func arr80(str string) (a [80]byte)   { copy(a[:], str); return }
func arr112(str string) (a [112]byte) { copy(a[:], str); return }
func arr128(str string) (a [128]byte) { copy(a[:], str); return }
func arr16(str string) (a [16]byte)   { copy(a[:], str); return }

func deviceV1Fields() DeviceCreationAction {
	return DeviceCreationAction{
		Version:                     1,
		EphemeralPublicSignatureKey: arr32("eph pub key"),
		UserID:                      arr32("user id"),
		DelegationSignature:         arr64("delegation sig"),
		PublicSignatureKey:          arr32("public signature key"),
		PublicEncryptionKey:         arr32("public enc key"),
	}
}

func v1Members() []GroupMember {
	return []GroupMember{
		{UserPublicEncryptionKey: arr32("pub user key"), SealedPrivateEncryptionKey: arr80("encrypted group priv key")},
		{UserPublicEncryptionKey: arr32("second pub user key"), SealedPrivateEncryptionKey: arr80("second encrypted group priv key")},
	}
}

type hashVector struct {
	name   string
	action func() Action
	author Hash
	hash   string // base64
}

func hashVectors() []hashVector {
	author := Hash(arr32("author"))
	return []hashVector{
		{"1 trustchain creation", func() Action {
			var a TrustchainCreationAction
			b, _ := hex.DecodeString("669823e7c50e13e0ed4a5691c663c7eb1bd65312d48d21d486760f04857df0ef")
			copy(a.PublicSignatureKey[:], b)
			return &a
		}, Hash{}, "wJ7dFItRFNtbyZ8WgJy/2CefYIDiljAKDFAH9KAHIBc="},
		{"2 device creation v1", func() Action { a := deviceV1Fields(); return &a }, author, "nPmcskd1KiuDywCkM0ltRXk2e5eTpy+GxlKKhdRWq8s="},
		{"6 device creation v2", func() Action {
			a := deviceV1Fields()
			a.Version = 2
			a.LastReset = arr32("reset block")
			return &a
		}, author, "Hy0ykBdASXL5eigQ22Bb6rYEqe6vMfHkqU8o+BdyF4k="},
		{"7 device creation v3", func() Action {
			a := deviceV1Fields()
			a.Version = 3
			a.UserPublicEncryptionKey = arr32("user pub enc key")
			a.SealedUserPrivateEncryptionKey = arr80("key")
			a.IsGhostDevice = true
			return &a
		}, author, "AEYXc2xMBM/E0xk3zLLMxSMkUPh4/iSuEurrQ3mrQiw="},
		{"8 key publish to user", func() Action {
			return &KeyPublishAction{Recipient: arr32("recipient user"), ResourceID: arr16("resource mac"), SealedKey: arr80("encrypted key...")}
		}, author, "lul/hcBQqE1G6HNuKBZyBorI4WAH9K/rgve4mR/cwCw="},
		{"11 key publish to user group", func() Action {
			return &KeyPublishAction{ToGroup: true, Recipient: arr32("recipient user"), ResourceID: arr16("resource mac"), SealedKey: arr80("encrypted key...")}
		}, author, "IdCaAoqJZw+0M1YDbfgZ1E1AcHk4sJqvKbRxiHqCIQI="},
		{"13 key publish to provisional user", func() Action {
			return &KeyPublishToProvisionalUserAction{AppPublicSignatureKey: arr32("recipient user"), ResourceID: arr16("resource mac"), TwoTimesSealedKey: arr128("encrypted key...")}
		}, author, "gYchdTY/TBXC4U0rlK0RrxbqiKHfahLW/FteMvcXLzk="},
		{"14 provisional identity claim", func() Action {
			return &ProvisionalIdentityClaimAction{
				UserID:                      arr32("the user id"),
				AppPublicSignatureKey:       arr32("the app sig pub key"),
				TankerPublicSignatureKey:    arr32("the tanker sig pub key"),
				AuthorSignatureByAppKey:     arr64("the author sig by app key"),
				AuthorSignatureByTankerKey:  arr64("the author sig by tanker key"),
				UserPublicEncryptionKey:     arr32("user pub key"),
				SealedPrivateEncryptionKeys: arr112("both encrypted private keys"),
			}
		}, author, "5BRkVAft4f79uIVCQX8D98+wqDEAQqQKdB3gFOw/clQ="},
		{"10 user group creation v1", func() Action {
			return &UserGroupCreationAction{
				Version:                   1,
				PublicSignatureKey:        arr32("pub sig key"),
				PublicEncryptionKey:       arr32("pub enc key"),
				SealedPrivateSignatureKey: arr112("encrypted priv sig key"),
				Members:                   v1Members(),
				SelfSignature:             arr64("self signature"),
			}
		}, author, "SKeSWc4BdOBuGY31q5IzhIBEzUy7veyLTbtNyHK8twE="},
		{"15 user group creation v2", func() Action {
			return &UserGroupCreationAction{
				Version:                   2,
				PublicSignatureKey:        arr32("pub sig key"),
				PublicEncryptionKey:       arr32("pub enc key"),
				SealedPrivateSignatureKey: arr112("encrypted priv sig key"),
				Members: []GroupMember{
					{UserID: arr32("user id"), UserPublicEncryptionKey: arr32("pub user key"), SealedPrivateEncryptionKey: arr80("encrypted group priv key")},
					{UserID: arr32("second user id"), UserPublicEncryptionKey: arr32("second pub user key"), SealedPrivateEncryptionKey: arr80("second encrypted group priv key")},
				},
				ProvisionalMembers: []GroupProvisionalMember{
					{AppPublicSignatureKey: arr32(provApp), TankerPublicSignatureKey: arr32(provTanker), TwoTimesSealedPrivateEncryptionKey: arr128("provisional user encrypted group priv key")},
					{AppPublicSignatureKey: arr32("2nd " + provApp), TankerPublicSignatureKey: arr32("2nd " + provTanker), TwoTimesSealedPrivateEncryptionKey: arr128("2nd provisional user encrypted group priv key")},
				},
				SelfSignature: arr64("self signature"),
			}
		}, author, hash15},
		{"12 user group addition v1", func() Action {
			return &UserGroupAdditionAction{
				Version:                1,
				GroupID:                arr32("group id"),
				PreviousGroupBlockHash: arr32("prev group block"),
				Members:                v1Members(),
				SelfSignature:          arr64("self signature"),
			}
		}, author, "+J1iz8DZz+W+QUwyfjXCd/zEa0KQQkTqz1Ougnq3xFg="},
	}
}

var provApp, provTanker, hash15 = "app provisional sig key", "tanker provisional sig key", "PfsSjw7Sy5pcRIHZUAlSgE3aHrkd/ZIn3ZCX+5uvSAk="

func TestHashVectors(t *testing.T) {
	t.Parallel()
	for _, vec := range hashVectors() {
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			a := vec.action()
			blk := New(Hash(arr32("trustchain id")), a, vec.author)
			h := blk.Hash()
			require.Equal(t, vec.hash, base64.StdEncoding.EncodeToString(h[:]))

			// Parse the serialized block back and re-serialize it.
			blk.Signature = arr64("sig")
			raw := blk.Serialize()
			parsed, err := Parse(raw)
			require.NoError(t, err)
			require.Equal(t, blk, parsed)
			require.Equal(t, raw, parsed.Serialize())
			back, err := parsed.Action()
			require.NoError(t, err)
			require.Equal(t, a, back)
			require.Equal(t, vec.hash, base64.StdEncoding.EncodeToString(func() []byte { h := parsed.Hash(); return h[:] }()))
		})
	}
}
