package encryption

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrUnknownFormat reports an empty buffer or a first byte that is not a
	// supported format version.
	ErrUnknownFormat = errors.New("unknown encryption format")
	// ErrTruncated reports encrypted data that ends before its format says it
	// should: a short header, a buffer smaller than the format overhead, or a
	// stream whose final (short) chunk is missing.
	ErrTruncated = errors.New("truncated encrypted data")
	// ErrDecryptionFailed reports an authentication failure (wrong key,
	// tampered, reordered or mixed-up data) or an inconsistent stream header.
	ErrDecryptionFailed = errors.New("decryption failed")
	// ErrBadPadding reports authenticated plaintext whose padding is malformed.
	ErrBadPadding = errors.New("bad padding")
	// ErrLimitExceeded reports input whose size, or whose declared chunk
	// size, is beyond the configured Limits.
	ErrLimitExceeded = errors.New("limit exceeded")
	// ErrKeyNotFound is returned by a KeyFinder that has no key for an ID,
	// and by ResolveKey when no lookup succeeded.
	ErrKeyNotFound = errors.New("key not found")
	// ErrInvalidKey reports a key that is not 32 bytes long.
	ErrInvalidKey = errors.New("invalid key")
	// ErrInvalidArgument reports bad encryption parameters (version that
	// cannot be produced, chunk size out of range).
	ErrInvalidArgument = errors.New("invalid argument")
)
