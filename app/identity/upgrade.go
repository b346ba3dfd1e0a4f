package identity

import (
	"encoding/base64"
	"fmt"
)

// Upgrade re-encodes an identity in the current format, with identity-go's
// UpgradeIdentity semantics:
//
//   - the document is decoded keeping its key order (duplicate keys: the last
//     value wins and the key takes the place of its last occurrence);
//   - no "target" key (exact name): ErrMissingTarget;
//   - target "email" without a "private_encryption_key" key (a legacy public
//     email identity): needs "value" (ErrMissingValue), then target becomes
//     "hashed_email" and value b64(H_32(value));
//   - every identity, changed or not, is re-encoded compactly with the keys in
//     canonical order (unknown keys first, in their original order for up to
//     12 keys; larger documents follow sort.Sort as identity-go does), with
//     Go's escaping; numbers are re-encoded as float64, as identity-go does.
//     Other targets pass through, e.g. {"target":"foo"}; a secret email
//     provisional identity stays "email".
//
// Not base64 / not JSON / not an object: *DecodeError with encoding/base64's or
// encoding/json's error. Deviations where identity-go panics: a JSON null
// document returns ErrMissingTarget, a non-string target passes through
// unchanged, and a non-string value of a legacy email identity returns
// ErrInvalidValue.
func Upgrade(identity string) (string, error) {
	s, err := upgrade(identity)
	if err != nil {
		return "", fmt.Errorf("upgrade identity: %w", err)
	}
	return s, nil
}

func upgrade(identity string) (string, error) {
	data, err := decodeB64(identity)
	if err != nil {
		return "", err
	}
	o, err := decodeLooseObject(data)
	if err != nil {
		return "", err
	}
	if o == nil {
		return "", ErrMissingTarget
	}
	target, found := o.get(keyTarget)
	if !found {
		return "", ErrMissingTarget
	}
	_, isPrivate := o.get(keyPrivateEncryptionKey)
	if target == TargetEmail && !isPrivate {
		raw, found := o.get(keyValue)
		if !found {
			return "", ErrMissingValue
		}
		value, ok := raw.(string)
		if !ok {
			return "", ErrInvalidValue
		}
		o.set(keyTarget, TargetHashedEmail)
		o.set(keyValue, base64.StdEncoding.EncodeToString(HashEmail(value)))
	}
	s, err := encodeCanonical(o)
	if err != nil {
		return "", &DecodeError{Err: err} // unreachable: decoded values re-encode
	}
	return s, nil
}
