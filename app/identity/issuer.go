package identity

import (
	"crypto/ed25519"
	"fmt"
	"io"
)

// Issuer creates the identities of one app whose secret was checked once (CheckApp) when the
// Issuer was made, so that a server creating many identities does not re-derive the app's
// public key from its seed at every creation (an Ed25519 base-point multiplication, as much
// as the rest of a permanent identity's key work). Its String and GoString never print the
// secret. An Issuer is safe for concurrent use; it keeps its own copy of the secret.
type Issuer struct {
	appID     []byte
	appSecret ed25519.PrivateKey
	// dropped is set by KeyPool.Drop (guarded by that pool's permMu): no pool makes identities
	// ahead of time with this Issuer any more, even for a request that still holds it.
	dropped bool
}

// NewIssuer checks the app as CheckApp does and returns its Issuer.
func NewIssuer(appID, appSecret []byte) (*Issuer, error) {
	if err := checkApp(appID, appSecret); err != nil {
		return nil, fmt.Errorf("new issuer: %w", err)
	}
	return &Issuer{appID: clone(appID), appSecret: clone(appSecret)}, nil
}

// AppID returns a copy of the app ID.
func (is *Issuer) AppID() []byte { return clone(is.appID) }

// Matches reports whether the Issuer was made for this app ID and secret (the secret is
// compared in constant time): a caller that caches Issuers uses it to notice a changed secret.
func (is *Issuer) Matches(appID, appSecret []byte) bool {
	return constantTimeEqual(is.appID, appID) && constantTimeEqual(is.appSecret, appSecret)
}

// CreatePermanent returns the b64 secret permanent identity of userID, as the package's
// CreatePermanent does, and its public identity (as PublicIdentity would derive it from the
// secret one, without decoding it again).
func (is *Issuer) CreatePermanent(userID string) (secret, public string, err error) {
	return is.CreatePermanentWith(userID, nil)
}

// CreatePermanentWith is CreatePermanent drawing randomness from rand (nil means
// crypto/rand.Reader), in the order CreatePermanentWith reads it.
func (is *Issuer) CreatePermanentWith(userID string, rand io.Reader) (secret, public string, err error) {
	p, err := newPermanent(is.appID, is.appSecret, userID, rand)
	if err != nil {
		return "", "", fmt.Errorf("create permanent identity: %w", err)
	}
	defer p.wipe()
	return p.SecretIdentity(), p.PublicIdentity(), nil
}

// CreateProvisional returns the b64 secret provisional identity of (target, value), as the
// package's CreateProvisional does, and its public identity (as PublicIdentity would derive it).
func (is *Issuer) CreateProvisional(target, value string) (secret, public string, err error) {
	return CreateProvisionalPair(is.appID, target, value, nil)
}

// CreateProvisionalPair is CreateProvisionalWith returning the public identity beside the
// secret one, both from the same keys (no second decoding). A provisional identity needs only
// the app ID, so this needs no Issuer.
func CreateProvisionalPair(appID []byte, target, value string, rand io.Reader) (secret, public string, err error) {
	return provisionalPair(appID, target, func() (*Provisional, error) { return newProvisional(appID, target, value, rand) })
}

// provisionalPair checks the arguments, makes a provisional identity with newKeys and returns
// its secret and public identities, wiping its keys.
func provisionalPair(appID []byte, target string, newKeys func() (*Provisional, error)) (secret, public string, err error) {
	if err := checkProvisionalArgs(appID, target); err != nil {
		return "", "", fmt.Errorf("create provisional identity: %w", err)
	}
	p, err := newKeys()
	if err != nil {
		return "", "", fmt.Errorf("create provisional identity: %w", err)
	}
	defer p.wipe()
	return p.SecretIdentity(), p.PublicIdentity(), nil
}

// String describes the Issuer without its secret.
func (is Issuer) String() string {
	return fmt.Sprintf("identity.Issuer{AppID: %x, secret redacted}", is.appID)
}

// GoString is String, so that %#v does not print the secret either.
func (is Issuer) GoString() string { return is.String() }

func clone(b []byte) []byte { return append([]byte(nil), b...) }
