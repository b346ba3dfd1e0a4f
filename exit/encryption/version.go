package encryption

import "strconv"

// Version is the format version, the first byte of every encrypted buffer.
type Version uint8

// The supported format versions (exit/FORMATS.md).
const (
	V1  Version = 1  // simple, IV stored last, no AD; decrypt only
	V2  Version = 2  // simple, random IV, no AD
	V3  Version = 3  // simple, zero IV, no AD
	V4  Version = 4  // stream, no padding
	V5  Version = 5  // simple, explicit resource ID, AD = resource ID
	V6  Version = 6  // simple padded, zero IV, AD = version byte
	V7  Version = 7  // simple padded, explicit resource ID
	V8  Version = 8  // stream padded, per-chunk 0x80 marker
	V9  Version = 9  // transparent session
	V10 Version = 10 // transparent session, padded
	V11 Version = 11 // transparent session stream, padded
)

// DefaultChunkSize is the encrypted chunk size used by the SDKs for the
// stream formats 4, 8 and 11 (1 MiB).
const DefaultChunkSize = 1 << 20

// Sizes of the cryptographic primitives (exit/FORMATS.md, "Primitives").
const (
	KeySize   = 32 // symmetric key
	IDSize    = 16 // simple resource ID, session ID, seed
	IVSize    = 24 // XChaCha20 nonce
	ivSize    = IVSize
	tagSize   = 16 // Poly1305 tag
	v48Header = 1 + 4 + IDSize + ivSize
	v11Header = 1 + 2*IDSize + 4
	v11Chunk  = 4 + tagSize // per-chunk overhead of format 11
)

// Supported reports whether v can be decrypted by this package.
func (v Version) Supported() bool { return v >= V1 && v <= V11 }

// IsStream reports whether v is a chunked stream format (4, 8 or 11).
func (v Version) IsStream() bool { return v == V4 || v == V8 || v == V11 }

// IsPadded reports whether v pads its plaintext (6, 7, 8, 10 or 11).
func (v Version) IsPadded() bool {
	return v == V6 || v == V7 || v == V8 || v == V10 || v == V11
}

// IsTransparentSession reports whether v uses a composite resource ID and a
// subkey derived from a session key (9, 10 or 11).
func (v Version) IsTransparentSession() bool { return v >= V9 && v <= V11 }

// CanEncrypt reports whether Encrypt can produce v (every supported version
// but 1, which the SDKs only ever produced for local data).
func (v Version) CanEncrypt() bool { return v >= V2 && v <= V11 }

// String returns "v" followed by the number.
func (v Version) String() string { return "v" + strconv.Itoa(int(v)) }

// minChunkSize is the smallest encrypted chunk size for which a stream of
// format v can end (a final chunk must be shorter than a full one).
func minChunkSize(v Version) int {
	switch v {
	case V4:
		return v48Header + tagSize + 1
	case V8:
		return v48Header + tagSize + 2
	default:
		return v11Chunk + 1
	}
}
