package encryption

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
)

// SimpleID is a 16-byte key-lookup handle: the resource ID of formats 1 to
// 8, or the session ID or seed of formats 9 to 11.
type SimpleID [IDSize]byte

// String returns the standard, padded base64 of the ID.
func (id SimpleID) String() string { return base64.StdEncoding.EncodeToString(id[:]) }

// Hex returns the lower-case hex of the ID.
func (id SimpleID) Hex() string { return hex.EncodeToString(id[:]) }

// compositeTransparentSession is the type byte of a composite resource ID.
const compositeTransparentSession = 0x00

// ResourceID identifies the key of an encrypted buffer. For formats 1 to 8
// it is a simple 16-byte ID; for formats 9 to 11 it is composite: a session
// ID and a per-resource seed.
type ResourceID struct {
	// ID is the simple resource ID, or the session ID of a composite ID.
	ID SimpleID
	// Seed is the per-resource seed of a composite ID (zero otherwise).
	Seed SimpleID
	// Composite is true for formats 9 to 11.
	Composite bool
}

// Bytes returns the 16-byte simple ID, or the 33-byte composite form
// 0x00 || sessionID || seed (exit/FORMATS.md).
func (r ResourceID) Bytes() []byte {
	if !r.Composite {
		return append([]byte(nil), r.ID[:]...)
	}
	out := make([]byte, 0, 1+2*IDSize)
	out = append(out, compositeTransparentSession)
	out = append(out, r.ID[:]...)
	return append(out, r.Seed[:]...)
}

// String returns the standard base64 of Bytes, as the SDKs' getResourceId.
func (r ResourceID) String() string { return base64.StdEncoding.EncodeToString(r.Bytes()) }

// Lookups returns the IDs under which a key may be published, in the order
// they must be tried: the simple ID, or the session ID then the seed.
func (r ResourceID) Lookups() []SimpleID {
	if r.Composite {
		return []SimpleID{r.ID, r.Seed}
	}
	return []SimpleID{r.ID}
}

// ParseResourceID parses the 16-byte simple or 33-byte composite form.
func ParseResourceID(b []byte) (ResourceID, error) {
	var r ResourceID
	switch {
	case len(b) == IDSize:
		copy(r.ID[:], b)
	case len(b) == 1+2*IDSize && b[0] == compositeTransparentSession:
		r.Composite = true
		copy(r.ID[:], b[1:])
		copy(r.Seed[:], b[1+IDSize:])
	default:
		return r, fmt.Errorf("parse resource id: %w: %d bytes", ErrInvalidArgument, len(b))
	}
	return r, nil
}

// KeyFinder returns the key published under a 16-byte ID. It returns an
// error wrapping ErrKeyNotFound when there is none; any other error aborts
// the lookup. A not-found error may carry detail (who created the
// resource, for instance); ResolveKey keeps it in its error chain for
// errors.As. If it has a method Published() bool reporting that keys were
// published under the ID but none could be opened, ResolveKey puts it
// first when a composite ID's two lookups both fail.
type KeyFinder interface {
	FindKey(id SimpleID) ([]byte, error)
}

// KeyFinderFunc adapts a function to KeyFinder.
type KeyFinderFunc func(id SimpleID) ([]byte, error)

// FindKey calls f.
func (f KeyFinderFunc) FindKey(id SimpleID) ([]byte, error) { return f(id) }

// KeyMap is an in-memory KeyFinder.
type KeyMap map[SimpleID][]byte

// FindKey returns the key stored under id, or ErrKeyNotFound.
func (m KeyMap) FindKey(id SimpleID) ([]byte, error) {
	if k, ok := m[id]; ok {
		return k, nil
	}
	return nil, ErrKeyNotFound
}

// ResolveKey returns the AEAD key for a resource (exit/FORMATS.md):
// for a simple ID the key found under it; for a composite ID, first the
// key found under the session ID, turned into H_32(sessionKey || seed),
// else the key found under the seed, used as is.
func ResolveKey(rid ResourceID, keys KeyFinder) ([]byte, error) {
	return resolveKey(rid, keys, nil)
}

// resolveKey is ResolveKey that derives a session's subkey into sub when given (no
// allocation; the result is then sub's bytes).
func resolveKey(rid ResourceID, keys KeyFinder, sub *[KeySize]byte) ([]byte, error) {
	if keys == nil {
		return nil, fmt.Errorf("resolve key: %w: no key finder", ErrKeyNotFound)
	}
	if !rid.Composite {
		k, err := keys.FindKey(rid.ID)
		if err != nil {
			return nil, fmt.Errorf("resolve key for resource %s: %w", rid, err)
		}
		return checkKey(k)
	}
	sessionKey, err := keys.FindKey(rid.ID)
	switch {
	case err == nil && sub != nil && len(sessionKey) == KeySize:
		*sub = deriveSubkey(sessionKey, rid.Seed)
		return sub[:], nil
	case err == nil:
		return DeriveSubkey(sessionKey, rid.Seed)
	case !errors.Is(err, ErrKeyNotFound):
		return nil, fmt.Errorf("resolve key for session %s: %w", rid.ID, err)
	}
	sessionErr := err
	k, err := keys.FindKey(rid.Seed)
	switch {
	case err == nil:
		return checkKey(k)
	case !errors.Is(err, ErrKeyNotFound):
		return nil, fmt.Errorf("resolve key for resource %s: %w", rid, err)
	}
	// Both lookups failed: keep both errors in the chain (errors.As finds
	// a finder's detailed error), the one of the ID keys were published
	// under first.
	first, second := sessionErr, err
	if published(err) && !published(sessionErr) {
		first, second = err, sessionErr
	}
	return nil, fmt.Errorf("resolve key for resource %s: %w (other lookup: %w)", rid, first, second)
}

// published reports whether a KeyFinder's not-found error says that keys
// were published under the ID but none could be opened (see KeyFinder).
func published(err error) bool {
	var p interface{ Published() bool }
	return errors.As(err, &p) && p.Published()
}

func checkKey(k []byte) ([]byte, error) {
	if len(k) != KeySize {
		return nil, fmt.Errorf("resolve key: %w: got %d bytes, want %d", ErrInvalidKey, len(k), KeySize)
	}
	return k, nil
}

// ExtractResourceID returns the format version and resource ID of an
// encrypted buffer without decrypting it. For stream formats only the
// first header is needed.
func ExtractResourceID(data []byte) (Version, ResourceID, error) {
	var rid ResourceID
	if len(data) == 0 {
		return 0, rid, fmt.Errorf("extract resource id: %w: empty buffer", ErrUnknownFormat)
	}
	v := Version(data[0])
	if !v.Supported() {
		return v, rid, fmt.Errorf("extract resource id: %w: version %d", ErrUnknownFormat, data[0])
	}
	need := headerSize(v)
	if len(data) < need {
		return v, rid, fmt.Errorf("extract resource id %s: %w: %d bytes, need %d", v, ErrTruncated, len(data), need)
	}
	switch v {
	case V1, V2, V3, V6:
		copy(rid.ID[:], data[len(data)-IDSize:])
	case V5, V7:
		copy(rid.ID[:], data[1:])
	case V4, V8:
		copy(rid.ID[:], data[5:])
	case V9, V10, V11:
		rid.Composite = true
		copy(rid.ID[:], data[1:])
		copy(rid.Seed[:], data[1+IDSize:])
	}
	return v, rid, nil
}

// headerSize is the number of bytes needed to extract the resource ID: the
// whole overhead for simple formats, the first header for streams.
func headerSize(v Version) int {
	switch v {
	case V4, V8:
		return v48Header
	case V11:
		return v11Header
	default:
		return simpleOverhead(v)
	}
}
