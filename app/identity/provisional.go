package identity

import (
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
)

// Provisional is a parsed and validated secret provisional identity.
// Its String and GoString methods never print the private keys.
type Provisional struct {
	// AppID is the trustchain_id (32 bytes).
	AppID []byte
	// Target is TargetEmail or TargetPhoneNumber.
	Target string
	// Value is the clear email address or phone number.
	Value string
	// PublicEncryptionKey is an X25519 public key (32 bytes).
	PublicEncryptionKey []byte
	// PrivateEncryptionKey is an X25519 scalar (32 bytes). Secret.
	PrivateEncryptionKey []byte
	// PublicSignatureKey is an Ed25519 public key (32 bytes).
	PublicSignatureKey ed25519.PublicKey
	// PrivateSignatureKey is seed || public key (64 bytes). Secret.
	PrivateSignatureKey ed25519.PrivateKey
}

// CreateProvisional returns the b64 secret provisional identity (canonical key
// order) for target ("email" or "phone_number") and value, using
// crypto/rand. As identity-go, it accepts an empty value.
func CreateProvisional(appID []byte, target, value string) (string, error) {
	return CreateProvisionalWith(appID, target, value, nil)
}

// CreateProvisionalWith is CreateProvisional drawing randomness from rand. It
// reads, in this order: 32 bytes for the Ed25519 signature seed, then 32 bytes
// for the X25519 private key, which it clamps as identity-go does and stores
// clamped. With a nil rand it draws from crypto/rand, and the X25519 private key
// is clamp(SHA-512(32 random bytes)[:32]) instead, so that its public key comes
// from Ed25519's fixed-base table at a third of the X25519 ladder's cost (see
// newEncryptionKeyPairFast): the same kind of key, made faster. (The published vectors hold unclamped
// libsodium scalars, so their private encryption keys cannot be reproduced;
// their public identities can.)
func CreateProvisionalWith(appID []byte, target, value string, rand io.Reader) (string, error) {
	if err := checkProvisionalArgs(appID, target); err != nil {
		return "", fmt.Errorf("create provisional identity: %w", err)
	}
	s, err := createProvisional(appID, target, value, rand)
	if err != nil {
		return "", fmt.Errorf("create provisional identity: %w", err)
	}
	return s, nil
}

// checkProvisionalArgs checks the app ID's size and the target.
func checkProvisionalArgs(appID []byte, target string) error {
	if len(appID) != AppIDSize {
		return &ConfigError{Field: fieldAppID, Size: len(appID)}
	}
	if !validProvisionalTarget(target) {
		return ErrUnsupportedProvisionalTarget
	}
	return nil
}

// createProvisional builds the identity once the arguments have been checked.
func createProvisional(appID []byte, target, value string, rand io.Reader) (string, error) {
	p, err := newProvisional(appID, target, value, rand)
	if err != nil {
		return "", err
	}
	defer p.wipe()
	return p.SecretIdentity(), nil
}

// newProvisional makes the keys of a provisional identity; the caller wipes it.
func newProvisional(appID []byte, target, value string, rand io.Reader) (*Provisional, error) {
	if rand == nil {
		return newProvisionalKeys(appID, target, value, nil)
	}
	sigPub, sigPriv, err := newSignatureKeyPair(rand)
	if err != nil {
		return nil, fmt.Errorf("signature key: %w", err)
	}
	encPub, encPriv, err := newEncryptionKeyPair(rand)
	if err != nil {
		clear(sigPriv)
		return nil, fmt.Errorf("encryption key: %w", err)
	}
	return &Provisional{
		AppID:                appID,
		Target:               target,
		Value:                value,
		PublicEncryptionKey:  encPub,
		PrivateEncryptionKey: encPriv,
		PublicSignatureKey:   sigPub,
		PrivateSignatureKey:  sigPriv,
	}, nil
}

// newProvisionalKeys is newProvisional with crypto/rand, its key pairs taken from pool (a nil
// pool makes them here); the caller wipes it.
func newProvisionalKeys(appID []byte, target, value string, pool *KeyPool) (*Provisional, error) {
	sig, enc, err := pool.provisionalKeys()
	if err != nil {
		return nil, err
	}
	return &Provisional{
		AppID:                appID,
		Target:               target,
		Value:                value,
		PublicEncryptionKey:  enc.pub,
		PrivateEncryptionKey: enc.priv,
		PublicSignatureKey:   sig.pub,
		PrivateSignatureKey:  sig.priv,
	}, nil
}

// wipe clears the private keys.
func (p *Provisional) wipe() {
	clear(p.PrivateEncryptionKey)
	clear(p.PrivateSignatureKey)
}

// SecretIdentity returns the b64 secret provisional identity in canonical
// form; for a parsed canonical identity it is the input, byte for byte.
func (p *Provisional) SecretIdentity() string {
	w := newDocWriter()
	w.bin(keyTrustchainID, p.AppID)
	w.str(keyTarget, p.Target)
	w.str(keyValue, p.Value)
	w.bin(keyPublicEncryptionKey, p.PublicEncryptionKey)
	w.bin(keyPrivateEncryptionKey, p.PrivateEncryptionKey)
	w.bin(keyPublicSignatureKey, p.PublicSignatureKey)
	w.bin(keyPrivateSignatureKey, p.PrivateSignatureKey)
	return w.b64()
}

// ParseProvisional parses and validates a secret provisional identity of the
// app: target "email" or "phone_number", trustchain_id equal to appID, a
// string value, the four keys with their sizes, X25519(private encryption
// key) equal to the public encryption key, and an Ed25519 private key whose
// seed derives its public half, which equals the public signature key.
// Decoding is as strict as ParsePermanent's; errors match ErrMalformedIdentity
// or ErrInvalidIdentity plus ErrWrongApp, ErrPublicIdentity,
// ErrUnsupportedTarget or ErrKeyMismatch where they apply.
func ParseProvisional(identity string, appID []byte) (*Provisional, error) {
	p, err := parseProvisional(identity, appID)
	if err != nil {
		return nil, fmt.Errorf("parse provisional identity: %w", err)
	}
	return p, nil
}

func parseProvisional(identity string, appID []byte) (*Provisional, error) {
	if len(appID) != AppIDSize {
		return nil, &ConfigError{Field: fieldAppID, Size: len(appID)}
	}
	o, err := decodeStrictObject(identity)
	if err != nil {
		return nil, err
	}
	p := &Provisional{}
	if p.Target, err = o.stringField(keyTarget); err != nil {
		return nil, err
	}
	if !validProvisionalTarget(p.Target) {
		return nil, invalidf(ErrUnsupportedTarget, "target %s is not a secret provisional target", describeTarget(p.Target))
	}
	if p.AppID, err = o.appID(appID); err != nil {
		return nil, err
	}
	if p.Value, err = o.stringField(keyValue); err != nil {
		return nil, err
	}
	_, hasEnc := o.get(keyPrivateEncryptionKey)
	_, hasSig := o.get(keyPrivateSignatureKey)
	if !hasEnc || !hasSig {
		return nil, invalidf(ErrPublicIdentity, "")
	}
	if err := o.binaryFields(
		binaryKey{keyPublicEncryptionKey, EncryptionKeySize, &p.PublicEncryptionKey},
		binaryKey{keyPrivateEncryptionKey, EncryptionKeySize, &p.PrivateEncryptionKey},
		binaryKey{keyPublicSignatureKey, SignaturePublicKeySize, (*[]byte)(&p.PublicSignatureKey)},
		binaryKey{keyPrivateSignatureKey, SignaturePrivateKeySize, (*[]byte)(&p.PrivateSignatureKey)},
	); err != nil {
		return nil, err
	}
	derived, err := X25519Base(p.PrivateEncryptionKey)
	if err != nil || subtle.ConstantTimeCompare(derived, p.PublicEncryptionKey) != 1 {
		return nil, invalidf(ErrKeyMismatch, "encryption key pair")
	}
	if !signatureKeyPairMatches(p.PrivateSignatureKey, p.PublicSignatureKey) {
		return nil, invalidf(ErrKeyMismatch, "signature key pair")
	}
	return p, nil
}

// HashedValue returns the value of the public identity: HashEmail(Value) for
// an email, HashPhoneNumber(PrivateSignatureKey, Value) for a phone number.
func (p *Provisional) HashedValue() []byte {
	if p.Target == TargetPhoneNumber {
		return HashPhoneNumber(p.PrivateSignatureKey, p.Value)
	}
	return HashEmail(p.Value)
}

// PublicIdentity returns the b64 public provisional identity (target
// hashed_email or hashed_phone_number), byte-identical to GetPublicIdentity's.
func (p *Provisional) PublicIdentity() string {
	w := newDocWriter()
	w.bin(keyTrustchainID, p.AppID)
	w.str(keyTarget, "hashed_"+p.Target)
	w.str(keyValue, base64.StdEncoding.EncodeToString(p.HashedValue()))
	w.bin(keyPublicEncryptionKey, p.PublicEncryptionKey)
	w.bin(keyPublicSignatureKey, p.PublicSignatureKey)
	return w.b64()
}

// String describes the identity without its private keys (the value, an
// email or phone number, is personal data and is not printed either).
func (p Provisional) String() string {
	return fmt.Sprintf("identity.Provisional{AppID: %s, Target: %s, secrets redacted}",
		base64.StdEncoding.EncodeToString(p.AppID), p.Target)
}

// GoString is String, so that %#v does not print secrets either.
func (p Provisional) GoString() string { return p.String() }
