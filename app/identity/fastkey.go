package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"fmt"
)

// newEncryptionKeyPairFast makes a fresh X25519 key pair from a 32-byte seed drawn from
// crypto/rand, with the private key clamp(SHA-512(seed)[:32]), as EncryptionKeyPairFromSeed
// derives it. The private key is the same kind of value as newEncryptionKeyPair's (a uniformly
// random clamped scalar), so the identity is the same format; only how the 32 random bytes
// become the scalar differs, which is why a caller that supplies its own randomness (to
// reproduce vectors) gets newEncryptionKeyPair instead.
func newEncryptionKeyPairFast() (pub, priv []byte, err error) {
	var seed [ed25519.SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, nil, fmt.Errorf("read random: %w", err)
	}
	defer clear(seed[:])
	return EncryptionKeyPairFromSeed(seed[:])
}

// EncryptionKeyPairFromSeed derives the X25519 pair whose private key is
// clamp(SHA-512(seed)[:32]) from a 32-byte seed, as libsodium's
// crypto_sign_ed25519_{sk,pk}_to_curve25519 give it for the Ed25519 key of seed; the public key
// comes from X25519Base (Edwards25519's fixed-base table). The exit packages (dump generation,
// sealing) use it too: one implementation of the derivation.
func EncryptionKeyPairFromSeed(seed []byte) (pub, priv []byte, err error) {
	if len(seed) != ed25519.SeedSize {
		return nil, nil, fmt.Errorf("derive encryption key: seed of %d bytes, want %d", len(seed), ed25519.SeedSize)
	}
	h := sha512.Sum512(seed)
	defer clear(h[:])
	priv = make([]byte, EncryptionKeySize)
	copy(priv, h[:32])
	priv[0] &= 248
	priv[31] &= 127
	priv[31] |= 64
	if pub, err = X25519Base(priv); err != nil { // unreachable for a 32-byte key
		clear(priv)
		return nil, nil, fmt.Errorf("derive encryption key: %w", err)
	}
	return pub, priv, nil
}
