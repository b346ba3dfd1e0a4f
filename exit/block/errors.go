package block

import "errors"

// Sentinel errors returned (wrapped) by this package.
var (
	// ErrTruncated reports a block or payload shorter than its fields.
	ErrTruncated = errors.New("truncated block")
	// ErrMalformed reports a block that cannot be parsed: bad varint,
	// unsupported serialization version, trailing bytes, bad flag value.
	ErrMalformed = errors.New("malformed block")
	// ErrUnknownNature reports a nature outside 1 to 18.
	ErrUnknownNature = errors.New("unknown block nature")
	// ErrInvalidSignature reports a signature that does not verify.
	ErrInvalidSignature = errors.New("invalid block signature")
)
