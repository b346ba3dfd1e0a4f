package identity

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// anyPublicIdentity is the permissive shape GetPublicIdentity decodes any
// identity into. encoding/json matches its keys case-insensitively and lets
// the last duplicate win, exactly as for identity-go's struct.
type anyPublicIdentity struct {
	TrustchainID        []byte `json:"trustchain_id"`
	Target              string `json:"target"`
	Value               string `json:"value"`
	PublicSignatureKey  []byte `json:"public_signature_key,omitempty"`
	PublicEncryptionKey []byte `json:"public_encryption_key,omitempty"`
}

// PublicIdentity derives the b64 public identity of any identity, with
// identity-go's GetPublicIdentity semantics:
//
//   - target "user" (secret or public permanent): {trustchain_id, target, value};
//   - target "email" (secret provisional or legacy public): target
//     "hashed_email", value b64(H_32(value)), public keys kept;
//   - target "phone_number": needs a "private_signature_key" key (exact name)
//     holding a string, else ErrInvalidIdentity; target
//     "hashed_phone_number", salted hash;
//   - any other target, or none: ErrUnsupportedTarget;
//   - not base64 / not JSON: *DecodeError carrying encoding/base64's or
//     encoding/json's error.
//
// Quirks kept from identity-go: it validates nothing else, so
// {"target":"email"} yields {"trustchain_id":null,"target":"hashed_email",
// "value":"<b64 H_32(\"\")>"}; a public key present in the input is copied
// (omitted when empty); the private signature key used as phone salt is
// decoded leniently (what decodes before an invalid byte is used). Deviation:
// identity-go panics on a non-string private_signature_key; this returns
// ErrInvalidIdentity.
func PublicIdentity(identity string) (string, error) {
	s, err := publicIdentity(identity)
	if err != nil {
		return "", fmt.Errorf("public identity: %w", err)
	}
	return s, nil
}

func publicIdentity(identity string) (string, error) {
	data, err := decodeB64(identity)
	if err != nil {
		return "", err
	}
	var id anyPublicIdentity
	if err := json.Unmarshal(data, &id); err != nil {
		return "", &DecodeError{Err: err}
	}
	target := id.Target
	switch id.Target {
	case TargetUser:
	case TargetEmail:
		id.Value = base64.StdEncoding.EncodeToString(HashEmail(id.Value))
		target = TargetHashedEmail
	case TargetPhoneNumber:
		var all map[string]any
		if err := json.Unmarshal(data, &all); err != nil {
			return "", &DecodeError{Err: err} // unreachable: decoded above
		}
		raw, found := all[keyPrivateSignatureKey]
		key, isString := raw.(string)
		if !found || !isString {
			return "", ErrInvalidIdentity
		}
		privateKey, _ := base64.StdEncoding.DecodeString(key) // lenient, as identity-go
		id.Value = base64.StdEncoding.EncodeToString(HashPhoneNumber(privateKey, id.Value))
		target = TargetHashedPhoneNumber
	default:
		return "", ErrUnsupportedTarget
	}

	w := newDocWriter()
	w.bin(keyTrustchainID, id.TrustchainID)
	w.str(keyTarget, target)
	w.str(keyValue, id.Value)
	if len(id.PublicEncryptionKey) > 0 {
		w.bin(keyPublicEncryptionKey, id.PublicEncryptionKey)
	}
	if len(id.PublicSignatureKey) > 0 {
		w.bin(keyPublicSignatureKey, id.PublicSignatureKey)
	}
	return w.b64(), nil
}
