package identity

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"fmt"
	"math/big"
)

// fieldP is 2^255 - 19, the prime of Curve25519's field.
var fieldP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))

// newEncryptionKeyPairFast makes a fresh X25519 key pair from a 32-byte seed drawn from
// crypto/rand, with the private key clamp(SHA-512(seed)[:32]) and its public key computed
// through Ed25519 instead of the X25519 ladder.
//
// Why it gives the pair X25519 gives: that scalar is the secret scalar of the Ed25519 key of
// seed, so Ed25519's public key is the Edwards point scalar·B, computed on a precomputed table
// of B's multiples (crypto/ed25519); Curve25519 and Edwards25519 are birationally equivalent
// with the base points corresponding, so the Montgomery u-coordinate of that point,
// u = (1 + y) / (1 - y), is X25519(scalar, 9). On this machine the two steps cost about a
// third of the ladder (BenchmarkEncryptionKeyPair). The private key is the same kind of value
// as newEncryptionKeyPair's (a uniformly random clamped scalar), so the identity is the same
// format; only how the 32 random bytes become the scalar differs, which is why a caller that
// supplies its own randomness (to reproduce vectors) gets newEncryptionKeyPair instead.
//
// The Ed25519 key of seed serves only this computation and is wiped; the conversion works on
// the public key only, so math/big (not constant time) sees nothing secret.
func newEncryptionKeyPairFast() (pub, priv []byte, err error) {
	var seed [ed25519.SeedSize]byte
	if _, err := rand.Read(seed[:]); err != nil {
		return nil, nil, fmt.Errorf("read random: %w", err)
	}
	defer clear(seed[:])
	return EncryptionKeyPairFromSeed(seed[:])
}

// errDegenerate is returned for an Edwards point with y = 1 (the identity), which no clamped
// scalar reaches: its Montgomery form is the point at infinity.
var errDegenerate = errors.New("derive encryption key: degenerate point")

// EncryptionKeyPairFromSeed is newEncryptionKeyPairFast's derivation for a given 32-byte seed:
// the X25519 pair whose private key is clamp(SHA-512(seed)[:32]), as libsodium's
// crypto_sign_ed25519_{sk,pk}_to_curve25519 give it, computed on Ed25519's fixed-base table.
// The exit packages (dump generation, sealing) use it too: one implementation of the trick.
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

	edKey := ed25519.NewKeyFromSeed(seed)
	defer clear(edKey)
	pub, err = montgomeryU(edKey[ed25519.SeedSize:])
	if err != nil {
		clear(priv)
		return nil, nil, err
	}
	return pub, priv, nil
}

// montgomeryU maps an encoded Edwards25519 point (little-endian y, x's sign in the top bit)
// to the little-endian u-coordinate of the corresponding Curve25519 point: (1 + y) / (1 - y).
func montgomeryU(edPublic []byte) ([]byte, error) {
	var be [32]byte
	for i := range be {
		be[i] = edPublic[31-i]
	}
	be[0] &= 0x7f // drop x's sign: u depends on y only
	y := new(big.Int).SetBytes(be[:])
	den := new(big.Int).Sub(big.NewInt(1), y)
	den.Mod(den, fieldP)
	if den.Sign() == 0 || den.ModInverse(den, fieldP) == nil {
		return nil, errDegenerate
	}
	u := new(big.Int).Add(big.NewInt(1), y)
	u.Mul(u, den).Mod(u, fieldP)
	u.FillBytes(be[:])
	out := make([]byte, EncryptionKeySize)
	for i := range out {
		out[i] = be[31-i]
	}
	return out, nil
}
