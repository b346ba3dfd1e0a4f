package identity

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unsafe"
)

// JSON keys of identity documents.
const (
	keyTrustchainID                 = "trustchain_id"
	keyTarget                       = "target"
	keyValue                        = "value"
	keyDelegationSignature          = "delegation_signature"
	keyEphemeralPublicSignatureKey  = "ephemeral_public_signature_key"
	keyEphemeralPrivateSignatureKey = "ephemeral_private_signature_key"
	keyUserSecret                   = "user_secret"
	keyPublicEncryptionKey          = "public_encryption_key"
	keyPrivateEncryptionKey         = "private_encryption_key"
	keyPublicSignatureKey           = "public_signature_key"
	keyPrivateSignatureKey          = "private_signature_key"
)

// canonicalKeys returns the known keys in canonical order (rank 1 to 11).
func canonicalKeys() [11]string {
	return [...]string{
		keyTrustchainID,
		keyTarget,
		keyValue,
		keyDelegationSignature,
		keyEphemeralPublicSignatureKey,
		keyEphemeralPrivateSignatureKey,
		keyUserSecret,
		keyPublicEncryptionKey,
		keyPrivateEncryptionKey,
		keyPublicSignatureKey,
		keyPrivateSignatureKey,
	}
}

// keyRank returns the canonical rank of a key: 1 to 11 for the known keys and
// 0 for any other key, which therefore sorts first (identity-go behaviour).
func keyRank(key string) int {
	switch key {
	case keyTrustchainID:
		return 1
	case keyTarget:
		return 2
	case keyValue:
		return 3
	case keyDelegationSignature:
		return 4
	case keyEphemeralPublicSignatureKey:
		return 5
	case keyEphemeralPrivateSignatureKey:
		return 6
	case keyUserSecret:
		return 7
	case keyPublicEncryptionKey:
		return 8
	case keyPrivateEncryptionKey:
		return 9
	case keyPublicSignatureKey:
		return 10
	case keyPrivateSignatureKey:
		return 11
	}
	return 0
}

// member is one key/value pair of a decoded JSON object. value holds what
// encoding/json would decode into an interface{} (string, float64, bool, nil,
// []any) except that objects are *object, so that key order survives.
type member struct {
	key   string
	value any
}

// object is a JSON object that remembers the order of its keys.
type object struct {
	members []member
}

// get returns the value of key (exact, case-sensitive match).
func (o *object) get(key string) (any, bool) {
	for _, m := range o.members {
		if m.key == key {
			return m.value, true
		}
	}
	return nil, false
}

// set replaces the value of an existing key in place, or appends the key.
func (o *object) set(key string, value any) {
	for i := range o.members {
		if o.members[i].key == key {
			o.members[i].value = value
			return
		}
	}
	o.members = append(o.members, member{key: key, value: value})
}

// MarshalJSON writes the object compactly with its keys in stored order and
// Go's HTML-safe string escaping.
func (o *object) MarshalJSON() ([]byte, error) {
	return o.appendJSON(nil)
}

func (o *object) appendJSON(buf []byte) ([]byte, error) {
	buf = append(buf, '{')
	for i, m := range o.members {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = appendJSONString(buf, m.key)
		buf = append(buf, ':')
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil, err
		}
		buf = append(buf, v...)
	}
	return append(buf, '}'), nil
}

// byRank sorts members by canonical rank. It is used with sort.Sort, as
// identity-go does (through orderedmap.Sort), so that the relative order of
// unknown keys, which all share rank 0, comes out the same.
type byRank []member

func (s byRank) Len() int           { return len(s) }
func (s byRank) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s byRank) Less(i, j int) bool { return keyRank(s[i].key) < keyRank(s[j].key) }

// encodeCanonical sorts a copy of the object's members by canonical rank and
// returns the b64 of the compact JSON.
func encodeCanonical(o *object) (string, error) {
	sorted := &object{members: append([]member(nil), o.members...)}
	sort.Sort(byRank(sorted.members))
	buf, err := sorted.appendJSON(make([]byte, 0, 512))
	if err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(buf), nil
}

// appendJSONString appends s as a JSON string exactly as encoding/json writes
// it with HTML escaping on (<, >, & as \u003c, \u003e, \u0026; U+2028 and
// U+2029 escaped; invalid UTF-8 replaced by U+FFFD).
func appendJSONString(buf []byte, s string) []byte {
	if isPlainJSONString(s) {
		buf = append(buf, '"')
		buf = append(buf, s...)
		return append(buf, '"')
	}
	v, _ := json.Marshal(s) // marshalling a string cannot fail
	return append(buf, v...)
}

// isPlainJSONString reports whether s is printable ASCII needing no escape.
func isPlainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// docWriter writes a JSON object whose keys the caller supplies already in
// canonical order, then base64-encodes it.
type docWriter struct {
	buf []byte
}

// docCapacity holds any identity document idvault writes (a secret permanent identity is about
// 650 bytes, a provisional one about 500 plus its email), so the buffer never grows: growing
// would leave a copy of the private keys written so far in the old buffer, which b64 cannot wipe.
const docCapacity = 1024

func newDocWriter() *docWriter {
	return &docWriter{buf: append(make([]byte, 0, docCapacity), '{')}
}

func (w *docWriter) key(k string) {
	if len(w.buf) > 1 {
		w.buf = append(w.buf, ',')
	}
	w.buf = appendJSONString(w.buf, k)
	w.buf = append(w.buf, ':')
}

// str writes a string member.
func (w *docWriter) str(k, v string) {
	w.key(k)
	w.buf = appendJSONString(w.buf, v)
}

// bin writes a binary member as a b64 string, or null for a nil slice (as
// encoding/json does for []byte).
func (w *docWriter) bin(k string, v []byte) {
	w.key(k)
	if v == nil {
		w.buf = append(w.buf, "null"...)
		return
	}
	w.buf = append(w.buf, '"')
	w.buf = base64.StdEncoding.AppendEncode(w.buf, v)
	w.buf = append(w.buf, '"')
}

// b64 closes the object and returns its base64 encoding; it wipes the
// plaintext buffer, which may hold private keys.
//
// The encoding is made into a buffer that becomes the string without a copy (nothing else refers
// to it, and it is never written again), as strings.Builder does: one allocation, not two.
func (w *docWriter) b64() string {
	out := w.b64Bytes()
	return unsafe.String(unsafe.SliceData(out), len(out))
}

// b64Bytes is b64 returning the encoding's buffer, for a caller that may have to wipe it.
func (w *docWriter) b64Bytes() []byte {
	w.buf = append(w.buf, '}')
	out := make([]byte, base64.StdEncoding.EncodedLen(len(w.buf)))
	base64.StdEncoding.Encode(out, w.buf)
	clear(w.buf)
	return out
}

// decodeB64 decodes a b64 identity like identity-go (padded standard
// encoding, CR and LF ignored), wrapping failures in *DecodeError.
func decodeB64(s string) ([]byte, error) {
	buf, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	return buf, nil
}

// decodeLooseObject decodes a JSON document the way identity-go's
// orderedmap-based UpgradeIdentity does: errors are encoding/json's own
// (wrapped in *DecodeError); duplicate keys keep the last value and move to
// the position of their last occurrence. It returns nil, nil for a JSON null
// (identity-go would then dereference a nil map and panic).
func decodeLooseObject(data []byte) (*object, error) {
	var check map[string]any
	if err := json.Unmarshal(data, &check); err != nil {
		return nil, &DecodeError{Err: err}
	}
	if check == nil {
		return nil, nil
	}
	return decodeObject(data, false)
}

// decodeObject reads a valid JSON object with its key order. In strict mode
// duplicate keys are an error; otherwise the last one wins and moves last.
func decodeObject(data []byte, strict bool) (*object, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, malformedf("not a JSON object")
	}
	o, err := readObject(dec, strict)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, malformedf("data after the JSON object")
	}
	return o, nil
}

func readObject(dec *json.Decoder, strict bool) (*object, error) {
	o := &object{}
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil, &DecodeError{Err: err}
		}
		if d, ok := tok.(json.Delim); ok && d == '}' {
			return o, nil
		}
		key, ok := tok.(string)
		if !ok {
			return nil, malformedf("object key is not a string")
		}
		tok, err = dec.Token()
		if err != nil {
			return nil, &DecodeError{Err: err}
		}
		value, err := readValue(dec, tok, strict)
		if err != nil {
			return nil, err
		}
		if i := o.index(key); i >= 0 {
			if strict {
				return nil, malformedf("duplicate key %s", describeKey(key))
			}
			o.members = append(o.members[:i], o.members[i+1:]...)
		}
		o.members = append(o.members, member{key: key, value: value})
	}
}

func (o *object) index(key string) int {
	for i, m := range o.members {
		if m.key == key {
			return i
		}
	}
	return -1
}

func readValue(dec *json.Decoder, tok json.Token, strict bool) (any, error) {
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil // string, float64, bool or nil
	}
	switch d {
	case '{':
		return readObject(dec, strict)
	case '[':
		arr := []any{}
		for {
			tok, err := dec.Token()
			if err != nil {
				return nil, &DecodeError{Err: err}
			}
			if d, ok := tok.(json.Delim); ok && d == ']' {
				return arr, nil
			}
			v, err := readValue(dec, tok, strict)
			if err != nil {
				return nil, err
			}
			arr = append(arr, v)
		}
	}
	return nil, malformedf("unexpected JSON delimiter %q", string(d))
}

// decodeStrictObject decodes a b64 identity for the validating parsers:
// strict padded standard base64, a single JSON object, no duplicate keys and
// no key that differs from a known key only by case (encoding/json would match
// such a key case-insensitively, so a document carrying both "target" and
// "TARGET" would mean different things to different readers).
func decodeStrictObject(s string) (*object, error) {
	data, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, &DecodeError{Err: err}
	}
	if !json.Valid(data) {
		var v any
		if err := json.Unmarshal(data, &v); err != nil {
			return nil, &DecodeError{Err: err}
		}
		return nil, malformedf("invalid JSON")
	}
	o, err := decodeObject(data, true)
	if err != nil {
		return nil, err
	}
	for _, m := range o.members {
		for _, k := range canonicalKeys() {
			if m.key != k && strings.EqualFold(m.key, k) {
				return nil, malformedf("key %q differs from %q only by case", m.key, k)
			}
		}
	}
	return o, nil
}

// describeKey names a key for an error message: known keys by name, any other
// key (which could be anything, secret material included) anonymously.
func describeKey(key string) string {
	if keyRank(key) > 0 {
		return fmt.Sprintf("%q", key)
	}
	return "(unknown key)"
}

// stringField returns the string value of a required key.
func (o *object) stringField(key string) (string, error) {
	v, ok := o.get(key)
	if !ok {
		return "", invalidf(nil, "missing %s", key)
	}
	s, ok := v.(string)
	if !ok {
		return "", malformedf("%s is not a string", key)
	}
	return s, nil
}

// binaryField returns the decoded b64 value of a required key of the given
// size.
func (o *object) binaryField(key string, size int) ([]byte, error) {
	s, err := o.stringField(key)
	if err != nil {
		return nil, err
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, malformedf("%s is not valid base64", key)
	}
	if len(b) != size {
		return nil, invalidf(nil, "%s has %d bytes, want %d", key, len(b), size)
	}
	return b, nil
}

// binaryKey names a required binary key, its size and where its decoded value goes.
type binaryKey struct {
	key  string
	size int
	dst  *[]byte
}

// binaryFields decodes each key with binaryField, in order, and stops at the first error.
func (o *object) binaryFields(keys ...binaryKey) error {
	for _, k := range keys {
		v, err := o.binaryField(k.key, k.size)
		if err != nil {
			return err
		}
		*k.dst = v
	}
	return nil
}

// appID returns the trustchain_id, which must be appID (ErrWrongApp otherwise).
func (o *object) appID(appID []byte) ([]byte, error) {
	id, err := o.binaryField(keyTrustchainID, AppIDSize)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(id, appID) {
		return nil, invalidf(ErrWrongApp, "")
	}
	return id, nil
}
