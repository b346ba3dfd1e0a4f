package keys

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"

	"golang.org/x/crypto/blake2b"

	"github.com/idvault/idvault/exit/encryption"
)

// VerificationKey holds the ghost device's private keys (exit/FORMATS.md,
// "Sealed keys and the verification key").
type VerificationKey struct {
	PrivateEncryptionKey [KeySize]byte
	PrivateSignatureKey  [SignaturePrivateSize]byte
}

// verificationKeyJSON has the keys in the SDKs' (alphabetical) order.
type verificationKeyJSON struct {
	PrivateEncryptionKey string `json:"privateEncryptionKey"`
	PrivateSignatureKey  string `json:"privateSignatureKey"`
}

// Encode returns b64( {"privateEncryptionKey": b64, "privateSignatureKey": b64} ).
func (vk VerificationKey) Encode() string {
	raw, err := json.Marshal(verificationKeyJSON{
		PrivateEncryptionKey: base64.StdEncoding.EncodeToString(vk.PrivateEncryptionKey[:]),
		PrivateSignatureKey:  base64.StdEncoding.EncodeToString(vk.PrivateSignatureKey[:]),
	})
	if err != nil {
		panic("keys: marshal verification key: " + err.Error()) // two strings cannot fail
	}
	return base64.StdEncoding.EncodeToString(raw)
}

// ParseVerificationKey decodes the base64 JSON form.
func ParseVerificationKey(s string) (VerificationKey, error) {
	var vk VerificationKey
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return vk, fmt.Errorf("parse verification key: invalid base64: %w", err)
	}
	var j verificationKeyJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return vk, fmt.Errorf("parse verification key: invalid json: %w", err)
	}
	enc, err := base64.StdEncoding.DecodeString(j.PrivateEncryptionKey)
	if err != nil || len(enc) != KeySize {
		return vk, fmt.Errorf("parse verification key: %w: privateEncryptionKey", ErrInvalidLength)
	}
	sig, err := base64.StdEncoding.DecodeString(j.PrivateSignatureKey)
	if err != nil || len(sig) != SignaturePrivateSize {
		return vk, fmt.Errorf("parse verification key: %w: privateSignatureKey", ErrInvalidLength)
	}
	copy(vk.PrivateEncryptionKey[:], enc)
	copy(vk.PrivateSignatureKey[:], sig)
	return vk, nil
}

// EncryptionKeyPair returns the ghost device's X25519 key pair.
func (vk VerificationKey) EncryptionKeyPair() (EncryptionKeyPair, error) {
	return EncryptionKeyPairFromPrivate(vk.PrivateEncryptionKey[:])
}

// PublicSignatureKey returns the ghost device's Ed25519 public key (the
// last 32 bytes of the private key), which identifies the ghost device.
func (vk VerificationKey) PublicSignatureKey() ed25519.PublicKey {
	return ed25519.PrivateKey(vk.PrivateSignatureKey[:]).Public().(ed25519.PublicKey)
}

// EncryptVerificationKey encrypts the ASCII base64 verification key in
// format 2 under the identity's user secret, as stored in
// encrypted_verification_key_for_user_secret. rnd supplies the IV
// (crypto/rand when nil).
func EncryptVerificationKey(vk VerificationKey, userSecret []byte, rnd io.Reader) ([]byte, error) {
	out, _, err := encryption.Encrypt(encryption.V2, userSecret, []byte(vk.Encode()), encryption.EncryptOptions{Rand: rnd})
	if err != nil {
		return nil, fmt.Errorf("encrypt verification key: %w", err)
	}
	return out, nil
}

// DecryptVerificationKey decrypts a format-2 encrypted verification key
// with the user secret (or with the E2E passphrase key).
func DecryptVerificationKey(encrypted, userSecret []byte) (VerificationKey, error) {
	if len(encrypted) == 0 || encryption.Version(encrypted[0]) != encryption.V2 {
		return VerificationKey{}, fmt.Errorf("decrypt verification key: %w: not format 2", encryption.ErrUnknownFormat)
	}
	clear, err := encryption.DecryptWithKey(userSecret, encrypted)
	if err != nil {
		return VerificationKey{}, fmt.Errorf("decrypt verification key: %w", err)
	}
	vk, err := ParseVerificationKey(string(clear))
	if err != nil {
		return VerificationKey{}, fmt.Errorf("decrypt verification key: %w", err)
	}
	return vk, nil
}

// E2EPassphraseKey returns H_32(passphrase || "tanker e2e passphrase key
// derivation pepper"), the key of encrypted_verification_key_for_e2e_passphrase.
func E2EPassphraseKey(passphrase string) []byte {
	k := blake2b.Sum256(append([]byte(passphrase), "tanker e2e passphrase key derivation pepper"...))
	return k[:]
}
