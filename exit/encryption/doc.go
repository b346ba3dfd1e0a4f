// Package encryption implements the Tanker resource encryption formats 1 to
// 11 (exit/FORMATS.md, "Encryption formats"): decryption of every format,
// encryption of formats 2 to 11, resource ID extraction and key
// resolution. It has no database and no network access.
//
// # Decrypting
//
// The first byte of an encrypted buffer is its Version. Decryption takes a
// KeyFinder that returns the key published under a 16-byte ID:
//
//	clear, rid, err := encryption.Decrypt(finder, ciphertext)
//
// Decrypt extracts the ResourceID (ExtractResourceID), resolves the key
// (ResolveKey: for formats 9 to 11 the session ID is looked up first and
// the data key derived as H_32(sessionKey || seed); failing that the seed
// is looked up and its key used as is), then decrypts.
//
// Streams (formats 4, 8 and 11, and any format for convenience) are
// decrypted from an io.Reader with NewDecryptReader. Memory is bounded by
// one encrypted chunk (plus a constant) whatever the stream size and
// whatever the pattern of the source's reads; a chunk is released only
// after its tag verified; a stream that is truncated (even at a chunk
// boundary), reordered or mixed with another fails with an error instead
// of ending early. Limits (WithLimits) caps the chunk size a header may
// declare and the size of simple formats read into memory.
//
// # Errors
//
// Errors wrap the sentinels ErrUnknownFormat, ErrTruncated (input too
// short for its format's header or overhead), ErrIncompleteStream (a
// stream cut after its first chunk; it also matches ErrDecryptionFailed),
// ErrDecryptionFailed, ErrBadPadding, ErrLimitExceeded, ErrKeyNotFound,
// ErrInvalidKey and ErrInvalidArgument; test them with errors.Is. Error
// messages never contain key material.
//
// # Keys
//
// Keys are 32-byte slices everywhere (Encrypt, DecryptWithKey, KeyMap,
// and the exit/keys openers). Encrypt and DecryptWithKey take the same key:
// the resource key for formats 1 to 8, the session key for 9 to 11.
// DeriveSubkey is the one derivation of a transparent-session data key.
//
// # Encrypting
//
// Encrypt produces formats 2 to 11 from a byte slice and NewEncryptWriter
// streams formats 4, 8 and 11 into an io.Writer. For formats 9 to 11 the
// key given is the session key; a random seed is drawn per resource.
// EncryptOptions selects padding (PaddingAuto, PaddingOff or a step),
// chunk size, explicit IDs and the random source; EncryptedSize predicts
// the output size.
package encryption
