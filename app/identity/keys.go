package identity

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"io"

	"filippo.io/edwards25519"
	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/curve25519"
)

// Sizes of the binary items of an identity, in bytes.
const (
	// AppIDSize is the size of an app ID (trustchain ID).
	AppIDSize = 32
	// AppSecretSize is the size of an app secret: an Ed25519 private key in
	// the seed(32) || public key(32) layout.
	AppSecretSize = 64
	// AppPublicKeySize is the size of the app public key (secret bytes 32..63).
	AppPublicKeySize = ed25519.PublicKeySize
	// UserIDSize is the size of a hashed user ID.
	UserIDSize = 32
	// UserSecretSize is the size of a user secret (31 random bytes and a
	// check byte).
	UserSecretSize = 32
	// SignatureSize is the size of a delegation signature.
	SignatureSize = ed25519.SignatureSize
	// SignaturePublicKeySize is the size of an Ed25519 public key.
	SignaturePublicKeySize = ed25519.PublicKeySize
	// SignaturePrivateKeySize is the size of an Ed25519 private key.
	SignaturePrivateKeySize = ed25519.PrivateKeySize
	// EncryptionKeySize is the size of an X25519 public or private key.
	EncryptionKeySize = curve25519.ScalarSize
	// HashSize is the size of the hashed email / phone number values.
	HashSize = 32
)

// trustchainCreationNature is the block nature of a trustchain root block.
const trustchainCreationNature = 0x01

// randomReader returns r, or crypto/rand.Reader when r is nil.
func randomReader(r io.Reader) io.Reader {
	if r == nil {
		return rand.Reader
	}
	return r
}

// hash32 is unkeyed BLAKE2b with a 32-byte digest over the concatenation of
// parts.
func hash32(parts ...[]byte) []byte {
	// The parts are short (keys, IDs, an email): hashing their concatenation in one call
	// avoids the digest state a streaming hash puts on the heap at every identity.
	var buf [256]byte
	b := buf[:0]
	for _, p := range parts {
		b = append(b, p...)
	}
	sum := blake2b.Sum256(b)
	return sum[:]
}

// hash16 is unkeyed BLAKE2b with a 16-byte digest (not a truncated hash).
func hash16(parts ...[]byte) []byte {
	h, _ := blake2b.New(16, nil) // cannot fail: valid size, no key
	for _, p := range parts {
		h.Write(p)
	}
	return h.Sum(nil)
}

// appIDFromPublicKey hashes the trustchain root block of the app:
// H_32(0x01 || 32 zero bytes || appPublicKey).
func appIDFromPublicKey(appPublicKey []byte) []byte {
	var author [32]byte
	return hash32([]byte{trustchainCreationNature}, author[:], appPublicKey)
}

// GenerateApp makes a new app: a 64-byte Ed25519 private key (seed || public
// key) and the app ID derived from its public half. It reads exactly 32 bytes
// (the seed) from rand; a nil rand means crypto/rand.Reader.
func GenerateApp(rand io.Reader) (appID, appSecret []byte, err error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(randomReader(rand), seed); err != nil {
		return nil, nil, fmt.Errorf("generate app: read random: %w", err)
	}
	appSecret = ed25519.NewKeyFromSeed(seed)
	clear(seed)
	return appIDFromPublicKey(appSecret[ed25519.SeedSize:]), appSecret, nil
}

// AppIDFromSecret derives the app ID from bytes 32..63 of a 64-byte app
// secret. It does not check the seed half.
func AppIDFromSecret(appSecret []byte) ([]byte, error) {
	if len(appSecret) != AppSecretSize {
		return nil, fmt.Errorf("app id from secret: %w", &ConfigError{Field: fieldAppSecret, Size: len(appSecret)})
	}
	return appIDFromPublicKey(appSecret[ed25519.SeedSize:]), nil
}

// AppPublicKey returns a copy of the app public key held in a 64-byte app
// secret.
func AppPublicKey(appSecret []byte) ([]byte, error) {
	if len(appSecret) != AppSecretSize {
		return nil, fmt.Errorf("app public key: %w", &ConfigError{Field: fieldAppSecret, Size: len(appSecret)})
	}
	return bytes.Clone(appSecret[ed25519.SeedSize:]), nil
}

// CheckApp returns an error if the sizes are wrong (*ConfigError), if the
// secret's public half does not hash to appID (ErrAppMismatch), or if the
// secret's seed does not derive its public half (ErrInvalidAppSecret).
//
// The last check goes beyond identity-go, which would silently produce
// identities with unverifiable delegation signatures from such a secret.
func CheckApp(appID, appSecret []byte) error {
	if err := checkApp(appID, appSecret); err != nil {
		return fmt.Errorf("check app: %w", err)
	}
	return nil
}

// checkApp is CheckApp without the operation prefix, in identity-go's order:
// app ID size, app secret size, mismatch, then the seed check.
func checkApp(appID, appSecret []byte) error {
	if len(appID) != AppIDSize {
		return &ConfigError{Field: fieldAppID, Size: len(appID)}
	}
	if len(appSecret) != AppSecretSize {
		return &ConfigError{Field: fieldAppSecret, Size: len(appSecret)}
	}
	return checkAppKeys(appID, appSecret)
}

// checkAppKeys runs the checks of checkApp that follow the size checks.
func checkAppKeys(appID, appSecret []byte) error {
	if subtle.ConstantTimeCompare(appIDFromPublicKey(appSecret[ed25519.SeedSize:]), appID) != 1 {
		return ErrAppMismatch
	}
	if !keyPairMatches(appSecret) {
		return fmt.Errorf("%w: its seed does not derive its public key", ErrInvalidAppSecret)
	}
	return nil
}

// signatureKeyPairMatches reports whether priv is the private half of pub: its
// second half is pub and its seed derives it.
func signatureKeyPairMatches(priv, pub []byte) bool {
	return subtle.ConstantTimeCompare(priv[ed25519.SeedSize:], pub) == 1 && keyPairMatches(priv)
}

// keyPairMatches reports whether a 64-byte Ed25519 private key's seed derives
// the public key stored in its second half.
func keyPairMatches(priv []byte) bool {
	derived := ed25519.NewKeyFromSeed(priv[:ed25519.SeedSize])
	return subtle.ConstantTimeCompare(derived[ed25519.SeedSize:], priv[ed25519.SeedSize:]) == 1
}

// newSignatureKeyPair reads a 32-byte seed from r and expands it.
func newSignatureKeyPair(r io.Reader) (ed25519.PublicKey, ed25519.PrivateKey, error) {
	seed := make([]byte, ed25519.SeedSize)
	if _, err := io.ReadFull(r, seed); err != nil {
		return nil, nil, fmt.Errorf("read random: %w", err)
	}
	priv := ed25519.NewKeyFromSeed(seed)
	clear(seed)
	return bytes.Clone(priv[ed25519.SeedSize:]), priv, nil
}

// newEncryptionKeyPair reads 32 bytes from r, clamps them as identity-go does
// (sk[0] &= 248, sk[31] &= 127, sk[31] |= 64) and stores the clamped scalar as
// the private key.
func newEncryptionKeyPair(r io.Reader) (pub, priv []byte, err error) {
	priv = make([]byte, EncryptionKeySize)
	if _, err := io.ReadFull(r, priv); err != nil {
		return nil, nil, fmt.Errorf("read random: %w", err)
	}
	priv[0] &= 248
	priv[31] &= 127
	priv[31] |= 64
	pub, err = X25519Base(priv)
	if err != nil { // unreachable for a 32-byte scalar
		return nil, nil, fmt.Errorf("derive encryption key: %w", err)
	}
	return pub, priv, nil
}

// X25519Base is X25519(scalar, base point): the public key of an X25519 private key, clamped as
// X25519 clamps (so clamped and unclamped keys give the same result). It is computed on the
// precomputed table of Edwards25519's base point (filippo.io/edwards25519, constant time)
// rather than with the Montgomery ladder, about a third of the ladder's time here
// (BenchmarkX25519Base): Curve25519 and Edwards25519 are birationally equivalent with their
// base points corresponding, the clamped scalar reduced modulo the group order gives the same
// multiple of the base point, and the Montgomery u-coordinate of that Edwards point,
// (1 + y) / (1 - y), is the X25519 result.
func X25519Base(scalar []byte) ([]byte, error) {
	s, err := edwards25519.NewScalar().SetBytesWithClamping(scalar)
	if err != nil {
		return nil, fmt.Errorf("x25519 base point: %w", err)
	}
	return new(edwards25519.Point).ScalarBaseMult(s).BytesMontgomery(), nil
}

// constantTimeEqual reports whether a and b are equal, in time that depends only on their
// lengths.
func constantTimeEqual(a, b []byte) bool { return subtle.ConstantTimeCompare(a, b) == 1 }

// HashUserID returns the hashed user ID H_32(utf8(userID) || appID), the
// value of a permanent identity.
func HashUserID(appID []byte, userID string) []byte {
	return hash32([]byte(userID), appID)
}

// HashEmail returns H_32(utf8(email)), the value of a hashed_email public
// provisional identity.
func HashEmail(email string) []byte {
	return hash32([]byte(email))
}

// HashPhoneNumber returns H_32(H_32(privateSignatureKey) || utf8(phone)), the
// value of a hashed_phone_number public provisional identity.
func HashPhoneNumber(privateSignatureKey []byte, phone string) []byte {
	salt := hash32(privateSignatureKey)
	return hash32(salt, []byte(phone))
}

// userSecretCheckByte returns the check byte of a user secret:
// H_16(random31 || hashedUserID)[0].
func userSecretCheckByte(random31, hashedUserID []byte) byte {
	return hash16(random31, hashedUserID)[0]
}

// newUserSecret reads 31 bytes from r and appends their check byte.
func newUserSecret(r io.Reader, hashedUserID []byte) ([]byte, error) {
	secret := make([]byte, UserSecretSize)
	if _, err := io.ReadFull(r, secret[:UserSecretSize-1]); err != nil {
		return nil, fmt.Errorf("read random: %w", err)
	}
	secret[UserSecretSize-1] = userSecretCheckByte(secret[:UserSecretSize-1], hashedUserID)
	return secret, nil
}

// CheckUserSecret reports whether userSecret is 32 bytes long and its last
// byte is the check byte for hashedUserID.
func CheckUserSecret(userSecret, hashedUserID []byte) bool {
	if len(userSecret) != UserSecretSize {
		return false
	}
	return userSecretCheckByte(userSecret[:UserSecretSize-1], hashedUserID) == userSecret[UserSecretSize-1]
}
