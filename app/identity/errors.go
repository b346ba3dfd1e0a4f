package identity

import (
	"errors"
	"fmt"
)

// Sentinel errors. Their texts are the ones identity-go uses where identity-go
// has an equivalent, so that the compatibility layer (Create,
// CreateProvisionalIdentity, GetPublicIdentity, UpgradeIdentity) returns
// byte-identical messages. Use errors.Is to test for them.
var (
	// ErrInvalidAppID is matched by every *ConfigError about the app ID.
	ErrInvalidAppID = errors.New("invalid AppID")
	// ErrInvalidAppSecret is matched by every *ConfigError about the app
	// secret, and by the error reporting a secret whose seed does not derive
	// its public half.
	ErrInvalidAppSecret = errors.New("invalid AppSecret")
	// ErrAppMismatch reports an app secret whose public half does not hash to
	// the app ID.
	ErrAppMismatch = errors.New("app secret and app ID mismatch")
	// ErrUnsupportedProvisionalTarget reports a provisional target other than
	// "email" and "phone_number".
	ErrUnsupportedProvisionalTarget = errors.New("unsupported provisional identity target")
	// ErrUnsupportedTarget reports an identity whose target the operation
	// cannot handle.
	ErrUnsupportedTarget = errors.New("unsupported identity target")
	// ErrInvalidIdentity reports a structurally decodable identity that is
	// not valid (identity-go uses it for a phone_number identity without a
	// private signature key; the parsers use it for every validation failure).
	ErrInvalidIdentity = errors.New("invalid tanker identity")
	// ErrMissingTarget reports an identity without a "target" key (Upgrade).
	ErrMissingTarget = errors.New("invalid provisional identity (missing target field)")
	// ErrMissingValue reports a legacy public email identity without a
	// "value" key (Upgrade).
	ErrMissingValue = errors.New("unsupported identity without value")
	// ErrInvalidValue reports a legacy public email identity whose "value" is
	// not a JSON string (Upgrade). identity-go panics in that case.
	ErrInvalidValue = errors.New("unsupported identity with a non-string value")
	// ErrMalformedIdentity is matched by errors about identities that are not
	// base64, not JSON, or not shaped like an identity at all.
	ErrMalformedIdentity = errors.New("malformed identity")
	// ErrWrongApp reports an identity whose trustchain_id is not the expected
	// app ID.
	ErrWrongApp = errors.New("identity belongs to another app")
	// ErrPublicIdentity reports a public identity where a secret one is
	// required.
	ErrPublicIdentity = errors.New("expected a secret identity, got a public identity")
	// ErrBadDelegationSignature reports a delegation signature that does not
	// verify with the app public key.
	ErrBadDelegationSignature = errors.New("invalid delegation signature")
	// ErrBadUserSecret reports a user secret whose check byte is wrong.
	ErrBadUserSecret = errors.New("invalid user secret")
	// ErrKeyMismatch reports a private key that does not match its public key.
	ErrKeyMismatch = errors.New("private key does not match public key")
	// ErrUserMismatch reports a permanent identity that belongs to another
	// user.
	ErrUserMismatch = errors.New("identity belongs to another user")
)

// Names of the configuration fields, as identity-go spells them in errors.
const (
	fieldAppID     = "AppID"
	fieldAppSecret = "AppSecret"
)

// ConfigError reports an app ID or app secret that is not base64 or has the
// wrong size. Its message is identity-go's, with one deliberate deviation:
// identity-go echoes the offending AppSecret string in
// "unable to decode AppSecret '<secret>', should be a valid base64 string";
// this package never puts secret material in an error and says
// "unable to decode AppSecret, should be a valid base64 string" instead.
// The AppID is echoed as identity-go does.
type ConfigError struct {
	// Field is "AppID" or "AppSecret".
	Field string
	// NotBase64 is true when the field is not valid padded standard base64.
	NotBase64 bool
	// AppID is the offending base64 input; set only for an undecodable AppID.
	AppID string
	// Size is the decoded size when it is wrong (NotBase64 false).
	Size int
}

// Error returns identity-go's message (see the type's doc for the AppSecret
// deviation).
func (e *ConfigError) Error() string {
	switch {
	case e.NotBase64 && e.Field == fieldAppID:
		return fmt.Sprintf("unable to decode AppID '%s', should be a valid base64 string", e.AppID)
	case e.NotBase64:
		return fmt.Sprintf("unable to decode %s, should be a valid base64 string", e.Field)
	default:
		return fmt.Sprintf("wrong byte size for %s: %d, should be %d", e.Field, e.Size, wantSize(e.Field))
	}
}

// Is makes errors.Is(err, ErrInvalidAppID) or errors.Is(err,
// ErrInvalidAppSecret) true depending on the field.
func (e *ConfigError) Is(target error) bool {
	switch e.Field {
	case fieldAppID:
		return target == ErrInvalidAppID
	case fieldAppSecret:
		return target == ErrInvalidAppSecret
	}
	return false
}

func wantSize(field string) int {
	if field == fieldAppSecret {
		return AppSecretSize
	}
	return AppIDSize
}

// DecodeError wraps the encoding/base64 or encoding/json error met while
// decoding an identity. Its message is the wrapped error's message unchanged
// (identity-go returns those errors raw); errors.Is(err,
// ErrMalformedIdentity) is true and errors.As reaches the wrapped error.
// Go's JSON errors may quote one offending character or number literal of the
// input, never a whole field.
type DecodeError struct {
	Err error
}

// Error returns the wrapped error's message.
func (e *DecodeError) Error() string { return e.Err.Error() }

// Unwrap returns ErrMalformedIdentity and the wrapped error.
func (e *DecodeError) Unwrap() []error { return []error{ErrMalformedIdentity, e.Err} }

// invalidf builds a validation error matching ErrInvalidIdentity and, when
// non-nil, the more precise sentinel kind.
func invalidf(kind error, format string, args ...any) error {
	detail := fmt.Sprintf(format, args...)
	if kind == nil {
		return fmt.Errorf("%w: %s", ErrInvalidIdentity, detail)
	}
	if detail == "" {
		return fmt.Errorf("%w: %w", ErrInvalidIdentity, kind)
	}
	return fmt.Errorf("%w: %w: %s", ErrInvalidIdentity, kind, detail)
}

// malformedf builds an error matching ErrMalformedIdentity.
func malformedf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformedIdentity, fmt.Sprintf(format, args...))
}
