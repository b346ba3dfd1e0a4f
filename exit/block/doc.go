// Package block serializes and parses Tanker trustchain blocks of natures 1
// to 18 (exit/FORMATS.md, "Blocks").
//
// A Block is the framing: serialization version (always 1), index, 32-byte
// trustchain ID, nature, varint-prefixed payload, author and Ed25519
// signature. Parse and Serialize are exact inverses for every block Parse
// accepts. Hash returns H_32(varint(nature) || author || payload), the
// block ID (device IDs are DeviceCreation hashes); VerifySignature checks
// the signature over that hash.
//
// Block.Action (or ParsePayload) decodes the payload into one of the
// *Action types; their AppendPayload methods serialize it back. Versioned
// natures share a type with a Version field (DeviceCreationAction for 2, 6,
// 7; DeviceRevocationAction for 4, 9; UserGroupCreationAction for 10, 15,
// 17; UserGroupAdditionAction for 12, 16, 18; KeyPublishAction for 8 and
// 11). The legacy user reset (5) is kept as an opaque payload.
//
// Parsing never panics and never allocates from a length or count field
// before checking that the input holds that many bytes. Errors wrap
// ErrTruncated, ErrMalformed, ErrUnknownNature or ErrInvalidSignature.
package block
