package encryption

import "errors"

// Sentinel errors returned (wrapped) by this package. Test them with errors.Is.
var (
	// ErrUnknownFormat reports an empty buffer or a first byte that is not a
	// supported format version.
	ErrUnknownFormat = errors.New("unknown encryption format")
	// ErrTruncated reports input too short to hold its format's header or
	// constant overhead: a simple format shorter than its overhead, a
	// stream shorter than its header plus the overhead of its first chunk.
	// A stream cut later is ErrIncompleteStream instead.
	ErrTruncated = errors.New("truncated encrypted data")
	// ErrIncompleteStream reports a stream that ended without its final
	// (short) chunk, after at least one whole chunk or inside a later
	// chunk. A cut stream is an integrity failure: errors.Is(err,
	// ErrDecryptionFailed) is also true for it.
	ErrIncompleteStream error = incompleteStream{}
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

// incompleteStream is the type of ErrIncompleteStream; it unwraps to
// ErrDecryptionFailed so that callers mapping integrity failures need one
// test.
type incompleteStream struct{}

func (incompleteStream) Error() string { return "stream ended without its final chunk" }

func (incompleteStream) Unwrap() error { return ErrDecryptionFailed }
