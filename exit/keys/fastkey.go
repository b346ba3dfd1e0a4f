package keys

import (
	"crypto/ed25519"
	"fmt"
	"io"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/nacl/box"

	"github.com/idvault/idvault/app/identity"
)

// EncryptionKeyPairFromSeed derives an X25519 key pair from a 32-byte seed through Ed25519,
// as libsodium's crypto_sign_ed25519_{sk,pk}_to_curve25519 do: the private key is the
// clamped Ed25519 secret scalar, clamp(SHA-512(seed)[:32]), and the public key the Montgomery
// form of the Ed25519 public key. The base-point multiplication runs on Ed25519's precomputed
// table, several times faster than the X25519 ladder; the pair is the one X25519 itself gives
// for that private key. The derivation is app/identity's (identity.EncryptionKeyPairFromSeed).
func EncryptionKeyPairFromSeed(seed []byte) (EncryptionKeyPair, error) {
	var kp EncryptionKeyPair
	if len(seed) != ed25519.SeedSize {
		return kp, fmt.Errorf("encryption key pair from seed: %w: seed of %d bytes", ErrInvalidLength, len(seed))
	}
	pub, priv, err := identity.EncryptionKeyPairFromSeed(seed)
	if err != nil {
		return kp, fmt.Errorf("encryption key pair from seed: %w", err)
	}
	copy(kp.Public[:], pub)
	copy(kp.Private[:], priv)
	clear(priv)
	return kp, nil
}

// GenerateEncryptionKeyPair draws a 32-byte seed from rnd and derives the key pair with
// EncryptionKeyPairFromSeed.
func GenerateEncryptionKeyPair(rnd io.Reader) (EncryptionKeyPair, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(rnd, seed); err != nil {
		return EncryptionKeyPair{}, fmt.Errorf("generate encryption key pair: %w", err)
	}
	return EncryptionKeyPairFromSeed(seed)
}

// SealWithEphemeral seals msg for recipient like crypto_box_seal, with the given ephemeral
// key pair (which must be fresh for every message): ephemeral public key || crypto_box of
// msg under nonce H_24(ephemeral public || recipient public). Open opens it.
func SealWithEphemeral(msg []byte, recipient *[KeySize]byte, eph EncryptionKeyPair) []byte {
	var nonce [24]byte
	h, _ := blake2b.New(24, nil)
	h.Write(eph.Public[:])
	h.Write(recipient[:])
	h.Sum(nonce[:0])
	out := make([]byte, 0, len(msg)+SealOverhead)
	out = append(out, eph.Public[:]...)
	return box.Seal(out, msg, &nonce, recipient, &eph.Private)
}

// SealFast is Seal with an ephemeral key pair from GenerateEncryptionKeyPair(rnd): the same
// container, made with one X25519 ladder instead of two.
func SealFast(msg []byte, recipient *[KeySize]byte, rnd io.Reader) ([]byte, error) {
	eph, err := GenerateEncryptionKeyPair(rnd)
	if err != nil {
		return nil, fmt.Errorf("seal: %w", err)
	}
	return SealWithEphemeral(msg, recipient, eph), nil
}
