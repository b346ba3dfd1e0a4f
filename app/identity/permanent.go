package identity

import (
	"bytes"
	"crypto/ed25519"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"unsafe"
)

// Permanent is a parsed and validated secret permanent identity.
// Its String and GoString methods never print the secret fields.
type Permanent struct {
	// AppID is the trustchain_id (32 bytes).
	AppID []byte
	// UserID is the hashed user ID, the identity's value (32 bytes).
	UserID []byte
	// DelegationSignature is the app's Ed25519 signature over
	// EphemeralPublicSignatureKey || UserID (64 bytes).
	DelegationSignature []byte
	// EphemeralPublicSignatureKey is 32 bytes.
	EphemeralPublicSignatureKey ed25519.PublicKey
	// EphemeralPrivateSignatureKey is seed || public key (64 bytes). Secret.
	EphemeralPrivateSignatureKey ed25519.PrivateKey
	// UserSecret is 31 random bytes and a check byte (32 bytes). Secret.
	UserSecret []byte
}

// CreatePermanent returns the b64 secret permanent identity (canonical key
// order) of userID in the app, using crypto/rand. As identity-go, it accepts an
// empty userID.
func CreatePermanent(appID, appSecret []byte, userID string) (string, error) {
	return CreatePermanentWith(appID, appSecret, userID, nil)
}

// CreatePermanentWith is CreatePermanent drawing randomness from rand (nil
// means crypto/rand.Reader). It reads, in this order: 32 bytes for the
// ephemeral Ed25519 seed, then the 31 random bytes of the user secret — the
// order identity-go uses, so the published vector can be reproduced. Everything
// else (the Ed25519 signature included) is deterministic.
func CreatePermanentWith(appID, appSecret []byte, userID string, rand io.Reader) (string, error) {
	if err := checkApp(appID, appSecret); err != nil {
		return "", fmt.Errorf("create permanent identity: %w", err)
	}
	s, err := createPermanent(appID, appSecret, userID, rand)
	if err != nil {
		return "", fmt.Errorf("create permanent identity: %w", err)
	}
	return s, nil
}

// createPermanent builds the identity once the app has been checked.
func createPermanent(appID, appSecret []byte, userID string, rand io.Reader) (string, error) {
	p, err := newPermanent(appID, appSecret, userID, rand)
	if err != nil {
		return "", err
	}
	defer p.wipe()
	return p.SecretIdentity(), nil
}

// newPermanent makes the keys of a permanent identity of a checked app; the caller wipes it.
func newPermanent(appID, appSecret []byte, userID string, rand io.Reader) (*Permanent, error) {
	r := randomReader(rand)
	hashedUserID := HashUserID(appID, userID)
	ephPub, ephPriv, err := newSignatureKeyPair(r)
	if err != nil {
		return nil, fmt.Errorf("ephemeral key: %w", err)
	}
	userSecret, err := newUserSecret(r, hashedUserID)
	if err != nil {
		clear(ephPriv)
		return nil, fmt.Errorf("user secret: %w", err)
	}
	sig := ed25519.Sign(ed25519.PrivateKey(appSecret), delegationPayload(ephPub, hashedUserID))
	return &Permanent{
		AppID:                        appID,
		UserID:                       hashedUserID,
		DelegationSignature:          sig,
		EphemeralPublicSignatureKey:  ephPub,
		EphemeralPrivateSignatureKey: ephPriv,
		UserSecret:                   userSecret,
	}, nil
}

// wipe clears the secret fields.
func (p *Permanent) wipe() {
	clear(p.EphemeralPrivateSignatureKey)
	clear(p.UserSecret)
}

// SecretIdentity returns the b64 secret permanent identity in canonical
// form; for a parsed canonical identity it is the input, byte for byte.
func (p *Permanent) SecretIdentity() string {
	b := p.secretIdentity()
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// secretIdentity is SecretIdentity as a buffer the caller may wipe.
func (p *Permanent) secretIdentity() []byte {
	w := newDocWriter()
	w.bin(keyTrustchainID, p.AppID)
	w.str(keyTarget, TargetUser)
	w.str(keyValue, base64.StdEncoding.EncodeToString(p.UserID))
	w.bin(keyDelegationSignature, p.DelegationSignature)
	w.bin(keyEphemeralPublicSignatureKey, p.EphemeralPublicSignatureKey)
	w.bin(keyEphemeralPrivateSignatureKey, p.EphemeralPrivateSignatureKey)
	w.bin(keyUserSecret, p.UserSecret)
	return w.b64Bytes()
}

// delegationPayload is the message the app signs: ephemeral public key ||
// hashed user ID.
func delegationPayload(ephemeralPublicKey, hashedUserID []byte) []byte {
	payload := make([]byte, 0, len(ephemeralPublicKey)+len(hashedUserID))
	payload = append(payload, ephemeralPublicKey...)
	return append(payload, hashedUserID...)
}

// ParsePermanent parses and validates a secret permanent identity of the app
// (appID, appPublicKey). It checks that appID is derived from appPublicKey,
// that trustchain_id is appID, that target is "user", the size of every field,
// that the ephemeral private key's seed derives its public half and that half
// is the ephemeral public key, the delegation signature (Ed25519 by the app
// key over ephemeral public key || value) and the user secret's check byte.
//
// Parsing is stricter than identity-go's decoding: strict padded base64 for the
// document and every field, exact key names, no duplicate keys and no key
// equal to a known key up to case. Unknown keys are ignored. Errors match
// ErrMalformedIdentity (undecodable) or ErrInvalidIdentity (decodable but
// invalid), plus a precise sentinel where one exists (ErrWrongApp,
// ErrPublicIdentity, ErrUnsupportedTarget, ErrKeyMismatch,
// ErrBadDelegationSignature, ErrBadUserSecret).
func ParsePermanent(identity string, appID, appPublicKey []byte) (*Permanent, error) {
	p, err := parsePermanent(identity, appID, appPublicKey)
	if err != nil {
		return nil, fmt.Errorf("parse permanent identity: %w", err)
	}
	return p, nil
}

func parsePermanent(identity string, appID, appPublicKey []byte) (*Permanent, error) {
	if len(appID) != AppIDSize {
		return nil, &ConfigError{Field: fieldAppID, Size: len(appID)}
	}
	if len(appPublicKey) != AppPublicKeySize {
		return nil, fmt.Errorf("%w: app public key has %d bytes, want %d", ErrAppMismatch, len(appPublicKey), AppPublicKeySize)
	}
	if !bytes.Equal(appIDFromPublicKey(appPublicKey), appID) {
		return nil, ErrAppMismatch
	}
	o, err := decodeStrictObject(identity)
	if err != nil {
		return nil, err
	}
	target, err := o.stringField(keyTarget)
	if err != nil {
		return nil, err
	}
	if target != TargetUser {
		return nil, invalidf(ErrUnsupportedTarget, "target %s is not %q", describeTarget(target), TargetUser)
	}
	p := &Permanent{}
	if p.AppID, err = o.appID(appID); err != nil {
		return nil, err
	}
	if _, ok := o.get(keyUserSecret); !ok {
		return nil, invalidf(ErrPublicIdentity, "")
	}
	if err := o.binaryFields(
		binaryKey{keyValue, UserIDSize, &p.UserID},
		binaryKey{keyDelegationSignature, SignatureSize, &p.DelegationSignature},
		binaryKey{keyEphemeralPublicSignatureKey, SignaturePublicKeySize, (*[]byte)(&p.EphemeralPublicSignatureKey)},
		binaryKey{keyEphemeralPrivateSignatureKey, SignaturePrivateKeySize, (*[]byte)(&p.EphemeralPrivateSignatureKey)},
		binaryKey{keyUserSecret, UserSecretSize, &p.UserSecret},
	); err != nil {
		return nil, err
	}
	if !signatureKeyPairMatches(p.EphemeralPrivateSignatureKey, p.EphemeralPublicSignatureKey) {
		return nil, invalidf(ErrKeyMismatch, "ephemeral signature key pair")
	}
	if !ed25519.Verify(appPublicKey, delegationPayload(p.EphemeralPublicSignatureKey, p.UserID), p.DelegationSignature) {
		return nil, invalidf(ErrBadDelegationSignature, "")
	}
	if !CheckUserSecret(p.UserSecret, p.UserID) {
		return nil, invalidf(ErrBadUserSecret, "wrong check byte")
	}
	return p, nil
}

// CheckUserID returns ErrUserMismatch unless the identity is the one of
// userID (its value is HashUserID(p.AppID, userID)).
func (p *Permanent) CheckUserID(userID string) error {
	if subtle.ConstantTimeCompare(HashUserID(p.AppID, userID), p.UserID) != 1 {
		return fmt.Errorf("check user id: %w", ErrUserMismatch)
	}
	return nil
}

// PublicIdentity returns the b64 public permanent identity
// {trustchain_id, target, value}, byte-identical to GetPublicIdentity's.
func (p *Permanent) PublicIdentity() string {
	w := newDocWriter()
	w.bin(keyTrustchainID, p.AppID)
	w.str(keyTarget, TargetUser)
	w.str(keyValue, base64.StdEncoding.EncodeToString(p.UserID))
	return w.b64()
}

// String describes the identity without its secret fields.
func (p Permanent) String() string {
	return fmt.Sprintf("identity.Permanent{AppID: %s, UserID: %s, secrets redacted}",
		base64.StdEncoding.EncodeToString(p.AppID), base64.StdEncoding.EncodeToString(p.UserID))
}

// GoString is String, so that %#v does not print secrets either.
func (p Permanent) GoString() string { return p.String() }
