package keys

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"

	"golang.org/x/crypto/nacl/box"

	"github.com/idvault/idvault/app/identity"
)

// Sizes of keys and containers.
const (
	KeySize               = 32 // X25519 key, symmetric key
	SignaturePrivateSize  = 64 // Ed25519 private key (seed || public)
	SealOverhead          = box.AnonymousOverhead
	SealedKeySize         = KeySize + SealOverhead              // 80
	SealedSignatureSize   = SignaturePrivateSize + SealOverhead // 112
	TwoTimesSealedKeySize = SealedKeySize + SealOverhead        // 128
	SealedClaimKeysSize   = 2*KeySize + SealOverhead            // 112
)

// Sentinel errors returned (wrapped) by this package.
var (
	// ErrInvalidLength reports a key or container of the wrong size.
	ErrInvalidLength = errors.New("invalid length")
	// ErrOpenFailed reports a sealed box that does not open with the key
	// pair (wrong recipient or tampered data).
	ErrOpenFailed = errors.New("cannot open sealed box")
	// ErrKeyMismatch reports a decrypted private key whose public half is
	// not the expected one.
	ErrKeyMismatch = errors.New("key mismatch")
)

// EncryptionKeyPair is an X25519 key pair.
type EncryptionKeyPair struct {
	Public  [KeySize]byte
	Private [KeySize]byte
}

// NewEncryptionKeyPair draws a key pair from rnd (crypto/rand when nil): 32 bytes of seed,
// derived with EncryptionKeyPairFromSeed (the Ed25519 table, faster than the X25519 ladder).
func NewEncryptionKeyPair(rnd io.Reader) (EncryptionKeyPair, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	return GenerateEncryptionKeyPair(rnd)
}

// EncryptionKeyPairFromPrivate derives the public key X25519(priv, base), on Edwards25519's
// fixed-base table (identity.X25519Base: a fifth of the ladder's time, and an import derives
// one per private key it holds). Clamped and unclamped private keys give the same pair.
func EncryptionKeyPairFromPrivate(priv []byte) (EncryptionKeyPair, error) {
	var kp EncryptionKeyPair
	if len(priv) != KeySize {
		return kp, fmt.Errorf("encryption key pair: %w: private key of %d bytes", ErrInvalidLength, len(priv))
	}
	pub, err := identity.X25519Base(priv)
	if err != nil {
		return kp, fmt.Errorf("encryption key pair: %w", err)
	}
	copy(kp.Private[:], priv)
	copy(kp.Public[:], pub)
	return kp, nil
}

// Seal encrypts msg for recipient like libsodium crypto_box_seal. rnd
// supplies the ephemeral key (crypto/rand when nil); see SealFast.
func Seal(msg []byte, recipient *[KeySize]byte, rnd io.Reader) ([]byte, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	return SealFast(msg, recipient, rnd)
}

// Open decrypts a sealed box with the recipient key pair.
func Open(sealed []byte, kp EncryptionKeyPair) ([]byte, error) {
	if len(sealed) < SealOverhead {
		return nil, fmt.Errorf("open sealed box: %w: %d bytes", ErrInvalidLength, len(sealed))
	}
	out, ok := box.OpenAnonymous(make([]byte, 0, len(sealed)-SealOverhead), sealed, &kp.Public, &kp.Private)
	if !ok {
		return nil, fmt.Errorf("open sealed box: %w", ErrOpenFailed)
	}
	return out, nil
}

// openSized opens a sealed box that must hold exactly size bytes.
func openSized(what string, sealed []byte, size int, kp EncryptionKeyPair) ([]byte, error) {
	if len(sealed) != size+SealOverhead {
		return nil, fmt.Errorf("open %s: %w: %d bytes, want %d", what, ErrInvalidLength, len(sealed), size+SealOverhead)
	}
	out, err := Open(sealed, kp)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", what, err)
	}
	return out, nil
}

// OpenSealedKey opens an 80-byte sealed 32-byte key: a resource key, or a
// user or group private encryption key. Like every symmetric key in exit/
// (encryption.Encrypt, encryption.KeyMap), the result is a 32-byte slice.
func OpenSealedKey(sealed []byte, kp EncryptionKeyPair) ([]byte, error) {
	return openSized("sealed key", sealed, KeySize, kp)
}

// OpenSealedPrivateEncryptionKey opens an 80-byte sealed X25519 private
// key and checks that its public half is wantPublic.
func OpenSealedPrivateEncryptionKey(sealed []byte, kp EncryptionKeyPair, wantPublic [KeySize]byte) (EncryptionKeyPair, error) {
	priv, err := OpenSealedKey(sealed, kp)
	if err != nil {
		return EncryptionKeyPair{}, err
	}
	opened, err := EncryptionKeyPairFromPrivate(priv)
	if err != nil {
		return EncryptionKeyPair{}, err
	}
	if opened.Public != wantPublic {
		return EncryptionKeyPair{}, fmt.Errorf("open sealed private key: %w: public key differs", ErrKeyMismatch)
	}
	return opened, nil
}

// OpenSealedSignatureKey opens a 112-byte sealed Ed25519 private key
// (64 bytes: seed || public key).
func OpenSealedSignatureKey(sealed []byte, kp EncryptionKeyPair) ([]byte, error) {
	return openSized("sealed signature key", sealed, SignaturePrivateSize, kp)
}

// SealTwice seals key for the app provisional encryption key, then the
// result for the Tanker provisional encryption key (128 bytes for a
// 32-byte key).
func SealTwice(key []byte, appPublic, tankerPublic *[KeySize]byte, rnd io.Reader) ([]byte, error) {
	inner, err := Seal(key, appPublic, rnd)
	if err != nil {
		return nil, err
	}
	return Seal(inner, tankerPublic, rnd)
}

// OpenTwoTimesSealedKey opens a 128-byte two-times sealed key with the
// Tanker half first, then the app half.
func OpenTwoTimesSealedKey(sealed []byte, app, tanker EncryptionKeyPair) ([]byte, error) {
	inner, err := openSized("two-times sealed key (tanker half)", sealed, SealedKeySize, tanker)
	if err != nil {
		return nil, err
	}
	return openSized("two-times sealed key (app half)", inner, KeySize, app)
}

// SealClaimKeys seals appPrivate || tankerPrivate for the user public
// encryption key (the 112-byte field of a provisional identity claim).
func SealClaimKeys(appPrivate, tankerPrivate [KeySize]byte, userPublic *[KeySize]byte, rnd io.Reader) ([]byte, error) {
	msg := append(append(make([]byte, 0, 2*KeySize), appPrivate[:]...), tankerPrivate[:]...)
	return Seal(msg, userPublic, rnd)
}

// OpenClaimKeys opens the claim's sealed provisional private encryption
// keys with the user key pair and returns the app and Tanker key pairs.
func OpenClaimKeys(sealed []byte, user EncryptionKeyPair) (app, tanker EncryptionKeyPair, err error) {
	out, err := openSized("claim keys", sealed, 2*KeySize, user)
	if err != nil {
		return app, tanker, err
	}
	if app, err = EncryptionKeyPairFromPrivate(out[:KeySize]); err != nil {
		return app, tanker, err
	}
	tanker, err = EncryptionKeyPairFromPrivate(out[KeySize:])
	return app, tanker, err
}
