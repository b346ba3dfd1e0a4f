package keys

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/nacl/box"

	"github.com/idvault/idvault/exit/encryption"
)

func newPair(t *testing.T) EncryptionKeyPair {
	t.Helper()
	kp, err := NewEncryptionKeyPair(nil)
	require.NoError(t, err)
	return kp
}

// A sealed box built by hand per libsodium (ephemeral pk || crypto_box
// with nonce H_24(epk || pk)) opens with Open.
func TestSealIsLibsodiumCompatible(t *testing.T) {
	t.Parallel()
	recipient := newPair(t)
	eph := newPair(t)
	h, err := blake2b.New(24, nil)
	require.NoError(t, err)
	h.Write(eph.Public[:])
	h.Write(recipient.Public[:])
	var nonce [24]byte
	copy(nonce[:], h.Sum(nil))
	sealed := box.Seal(append([]byte(nil), eph.Public[:]...), []byte("resource key"), &nonce, &recipient.Public, &eph.Private)

	got, err := Open(sealed, recipient)
	require.NoError(t, err)
	require.Equal(t, "resource key", string(got))
}

func TestSealedKeys(t *testing.T) {
	t.Parallel()
	user := newPair(t)
	other := newPair(t)
	key := bytes.Repeat([]byte{3}, KeySize)

	sealed, err := Seal(key, &user.Public, nil)
	require.NoError(t, err)
	require.Len(t, sealed, SealedKeySize)
	got, err := OpenSealedKey(sealed, user)
	require.NoError(t, err)
	require.Equal(t, key, got)

	_, err = OpenSealedKey(sealed, other)
	require.ErrorIs(t, err, ErrOpenFailed)
	_, err = OpenSealedKey(sealed[:79], user)
	require.ErrorIs(t, err, ErrInvalidLength)

	// A sealed user private key must match the published user public key.
	group := newPair(t)
	sealedPriv, err := Seal(group.Private[:], &user.Public, nil)
	require.NoError(t, err)
	opened, err := OpenSealedPrivateEncryptionKey(sealedPriv, user, group.Public)
	require.NoError(t, err)
	require.Equal(t, group, opened)
	_, err = OpenSealedPrivateEncryptionKey(sealedPriv, user, other.Public)
	require.ErrorIs(t, err, ErrKeyMismatch)

	_, sigPriv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	sealedSig, err := Seal(sigPriv, &group.Public, nil)
	require.NoError(t, err)
	require.Len(t, sealedSig, SealedSignatureSize)
	gotSig, err := OpenSealedSignatureKey(sealedSig, group)
	require.NoError(t, err)
	require.Equal(t, []byte(sigPriv), gotSig)
}

func TestTwoTimesSealed(t *testing.T) {
	t.Parallel()
	app, tanker := newPair(t), newPair(t)
	key := bytes.Repeat([]byte{9}, KeySize)
	sealed, err := SealTwice(key, &app.Public, &tanker.Public, nil)
	require.NoError(t, err)
	require.Len(t, sealed, TwoTimesSealedKeySize)

	got, err := OpenTwoTimesSealedKey(sealed, app, tanker)
	require.NoError(t, err)
	require.Equal(t, key, got)

	// The outer layer is the Tanker half: swapping the halves fails.
	_, err = OpenTwoTimesSealedKey(sealed, tanker, app)
	require.ErrorIs(t, err, ErrOpenFailed)
	require.ErrorContains(t, err, "tanker half")
}

func TestClaimKeys(t *testing.T) {
	t.Parallel()
	user, app, tanker := newPair(t), newPair(t), newPair(t)
	sealed, err := SealClaimKeys(app.Private, tanker.Private, &user.Public, nil)
	require.NoError(t, err)
	require.Len(t, sealed, SealedClaimKeysSize)
	gotApp, gotTanker, err := OpenClaimKeys(sealed, user)
	require.NoError(t, err)
	require.Equal(t, app, gotApp)
	require.Equal(t, tanker, gotTanker)
}

func TestEncryptionKeyPairFromPrivate(t *testing.T) {
	t.Parallel()
	kp := newPair(t)
	got, err := EncryptionKeyPairFromPrivate(kp.Private[:])
	require.NoError(t, err)
	require.Equal(t, kp, got)
	_, err = EncryptionKeyPairFromPrivate(kp.Private[:31])
	require.ErrorIs(t, err, ErrInvalidLength)
}

func newVerificationKey(t *testing.T) VerificationKey {
	var vk VerificationKey
	_, err := rand.Read(vk.PrivateEncryptionKey[:])
	require.NoError(t, err)
	_, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	copy(vk.PrivateSignatureKey[:], priv)
	return vk
}

func TestVerificationKeyJSON(t *testing.T) {
	t.Parallel()
	vk := newVerificationKey(t)
	enc := vk.Encode()
	raw, err := base64.StdEncoding.DecodeString(enc)
	require.NoError(t, err)
	want := `{"privateEncryptionKey":"` + base64.StdEncoding.EncodeToString(vk.PrivateEncryptionKey[:]) +
		`","privateSignatureKey":"` + base64.StdEncoding.EncodeToString(vk.PrivateSignatureKey[:]) + `"}`
	require.Equal(t, want, string(raw), "compact JSON, alphabetical keys")

	back, err := ParseVerificationKey(enc)
	require.NoError(t, err)
	require.Equal(t, vk, back)
	require.Equal(t, ed25519.PublicKey(vk.PrivateSignatureKey[32:]), vk.PublicSignatureKey())

	bad := []struct {
		name string
		in   string
	}{
		{"not base64", "%%%"},
		{"not json", base64.StdEncoding.EncodeToString([]byte("nope"))},
		{"short key", func() string {
			b, _ := json.Marshal(map[string]string{"privateEncryptionKey": "AAAA", "privateSignatureKey": "AAAA"})
			return base64.StdEncoding.EncodeToString(b)
		}()},
	}
	for _, tc := range bad {
		_, err := ParseVerificationKey(tc.in)
		require.Error(t, err, tc.name)
	}
}

func TestVerificationKeyUnderUserSecret(t *testing.T) {
	t.Parallel()
	vk := newVerificationKey(t)
	secret := bytes.Repeat([]byte{5}, KeySize)
	enc, err := EncryptVerificationKey(vk, secret, nil)
	require.NoError(t, err)
	require.Equal(t, byte(2), enc[0], "format 2")
	require.Len(t, enc, len(vk.Encode())+41)

	got, err := DecryptVerificationKey(enc, secret)
	require.NoError(t, err)
	require.Equal(t, vk, got)

	_, err = DecryptVerificationKey(enc, bytes.Repeat([]byte{6}, KeySize))
	require.ErrorIs(t, err, encryption.ErrDecryptionFailed)
	_, err = DecryptVerificationKey(append([]byte{3}, enc[1:]...), secret)
	require.ErrorIs(t, err, encryption.ErrUnknownFormat)

	// The ghost key pair derives from the verification key.
	kp, err := vk.EncryptionKeyPair()
	require.NoError(t, err)
	require.Equal(t, vk.PrivateEncryptionKey, kp.Private)
}

func TestE2EPassphraseKey(t *testing.T) {
	t.Parallel()
	want := blake2b.Sum256([]byte("pass" + "tanker e2e passphrase key derivation pepper"))
	require.Equal(t, want[:], E2EPassphraseKey("pass"))
}
