package store

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"slices"
	"unsafe"
)

// A record's identities are packed before they are sealed (record layout 3): an identity is the
// standard base64 of a JSON object whose values are mostly standard base64 too (keys,
// signatures), so as text it takes about 2.4 times its bytes packed: a new permanent identity's
// secret identity is 688 bytes of text and 281 packed, its public identity 180 and 77, a secret
// provisional identity 592 and 241. Smaller records fill fewer B+tree pages, and a commit writes
// fewer (see app/PERFORMANCE.md).
//
// packIdentity keeps the exact string: it packs only what unpacks to the same bytes (checked on
// every pack), and stores anything else as it is.
//
// Packed plaintext: one byte, packRaw or packJSON. packRaw: the string's bytes. packJSON: the
// string is the padded standard base64 of {"k":"v",...} (no space, keys and values with no
// quote or backslash); then each member: its key (one byte, an index of packKeys from 1, or 0
// then uvarint(length) || bytes), its value (packText then uvarint(length) || bytes, or
// packB64 then uvarint(length) || the bytes whose padded standard base64 it is).
const (
	packRaw  = 0
	packJSON = 1

	packText = 0
	packB64  = 1
)

// packKeys are the members of Tanker's identities, numbered from 1 in a packed identity. The
// order is part of the layout: append only.
var packKeys = [...]string{
	"trustchain_id", "target", "value", "delegation_signature", "ephemeral_public_signature_key",
	"ephemeral_private_signature_key", "user_secret", "public_encryption_key",
	"private_encryption_key", "public_signature_key", "private_signature_key",
}

var errPacked = errors.New("store: unpack identity: truncated or unknown layout")

// packIdentity appends s packed, at most len(s)+1 bytes, to dst. The decoded secrets it goes
// through are wiped before it returns; what it appends is the caller's to wipe. dst is grown
// first, if need be, to hold len(s)+1 more bytes, so that no copy of a secret is left in an
// array that append outgrew.
func packIdentity(dst []byte, s string) []byte {
	dst = slices.Grow(dst, len(s)+1)
	start := len(dst)
	var doc []byte
	defer func() { clear(doc) }()
	out, ok := packJSONIdentity(append(dst, packJSON), s, &doc)
	if ok {
		back, err := unpackIdentity(nil, out[start:])
		same := err == nil && string(back) == s
		clear(back)
		if same {
			return out
		}
	}
	clear(out[start:])
	return packRawIdentity(dst[:start], s)
}

// packRawIdentity appends s in the raw coding: as it is, after packRaw.
func packRawIdentity(dst []byte, s string) []byte {
	return append(append(dst, packRaw), s...)
}

// packJSONIdentity appends the members of s after dst, or reports false when s is not the
// base64 of a flat JSON object of plain strings. *doc is left holding the decoded JSON.
func packJSONIdentity(dst []byte, s string, doc *[]byte) ([]byte, bool) {
	var err error
	// AppendDecode only reads s: no copy of the identity is made for it.
	if *doc, err = base64.StdEncoding.AppendDecode(nil, unsafe.Slice(unsafe.StringData(s), len(s))); err != nil {
		return dst, false
	}
	d := *doc
	if len(d) < 2 || d[0] != '{' || d[len(d)-1] != '}' {
		return dst, false
	}
	rest := d[1 : len(d)-1]
	for len(rest) > 0 {
		var key, val []byte
		var ok bool
		if key, rest, ok = plainString(rest); !ok || len(rest) == 0 || rest[0] != ':' {
			return dst, false
		}
		if val, rest, ok = plainString(rest[1:]); !ok {
			return dst, false
		}
		if len(rest) > 0 {
			if rest[0] != ',' || len(rest) == 1 {
				return dst, false
			}
			rest = rest[1:]
		}
		dst = appendPackedKey(dst, key)
		// A value that is padded base64 goes in decoded (a non-canonical one fails the caller's
		// round trip); any other as text.
		if n, ok := decodedLen(val); ok {
			mark := len(dst)
			dst = binary.AppendUvarint(append(dst, packB64), uint64(n))
			body := len(dst)
			var err error
			if dst, err = base64.StdEncoding.AppendDecode(dst, val); err == nil && len(dst)-body == n {
				continue
			}
			clear(dst[mark:])
			dst = dst[:mark]
		}
		dst = binary.AppendUvarint(append(dst, packText), uint64(len(val)))
		dst = append(dst, val...)
	}
	return dst, true
}

// decodedLen is the length of the bytes whose padded standard base64 is v, if v has the shape
// of one (its bytes are checked by decoding).
func decodedLen(v []byte) (int, bool) {
	if len(v) == 0 || len(v)%4 != 0 {
		return 0, false
	}
	n := len(v) / 4 * 3
	if v[len(v)-1] == '=' {
		n--
		if v[len(v)-2] == '=' {
			n--
		}
	}
	return n, true
}

// plainString reads a JSON string with no backslash at the start of b: its contents and what
// follows its closing quote.
func plainString(b []byte) (s, rest []byte, ok bool) {
	if len(b) == 0 || b[0] != '"' {
		return nil, nil, false
	}
	for i := 1; i < len(b); i++ {
		switch b[i] {
		case '"':
			return b[1:i], b[i+1:], true
		case '\\':
			return nil, nil, false
		}
	}
	return nil, nil, false
}

func appendPackedKey(dst, key []byte) []byte {
	for i, k := range packKeys {
		if k == string(key) {
			return append(dst, byte(i+1))
		}
	}
	dst = binary.AppendUvarint(append(dst, 0), uint64(len(key)))
	return append(dst, key...)
}

// unpackIdentity appends the identity packed in p to dst.
func unpackIdentity(dst, p []byte) ([]byte, error) {
	if len(p) == 0 {
		return nil, errPacked
	}
	if p[0] == packRaw {
		return append(dst, p[1:]...), nil
	}
	if p[0] != packJSON {
		return nil, errPacked
	}
	var buf [12]packedMember
	members, size, err := unpackMembers(buf[:0], p[1:])
	if err != nil {
		return nil, err
	}
	// The JSON holds the secrets in clear: it is made at its size, so no copy is left behind by
	// a growing buffer, and wiped once encoded.
	doc := appendMembersJSON(make([]byte, 0, size), members)
	dst = base64.StdEncoding.AppendEncode(dst, doc)
	clear(doc)
	return dst, nil
}

// packedMember is one member of a packed identity, its bytes still in the packed plaintext:
// its value is the bytes whose base64 it is when b64 is set.
type packedMember struct {
	key, val []byte
	b64      bool
}

// unpackMembers appends to members those of a packJSON plaintext (rest, past its layout byte)
// and returns them with the size of the JSON object they make.
func unpackMembers(members []packedMember, rest []byte) ([]packedMember, int, error) {
	size := 2 // the braces
	for len(rest) > 0 {
		var m packedMember
		if k := int(rest[0]); k > 0 {
			if k > len(packKeys) {
				return nil, 0, errPacked
			}
			m.key, rest = unsafe.Slice(unsafe.StringData(packKeys[k-1]), len(packKeys[k-1])), rest[1:] // only read
		} else {
			var err error
			if m.key, rest, err = packedBytes(rest[1:]); err != nil {
				return nil, 0, err
			}
		}
		if len(rest) == 0 || rest[0] > packB64 {
			return nil, 0, errPacked
		}
		m.b64 = rest[0] == packB64
		var err error
		if m.val, rest, err = packedBytes(rest[1:]); err != nil {
			return nil, 0, err
		}
		size += len(m.key) + 6 // "k":"v",
		if m.b64 {
			size += base64.StdEncoding.EncodedLen(len(m.val))
		} else {
			size += len(m.val)
		}
		members = append(members, m)
	}
	return members, size, nil
}

// appendMembersJSON appends members to doc as a JSON object, {"k":"v",...}, the values with
// b64 set encoded back to base64.
func appendMembersJSON(doc []byte, members []packedMember) []byte {
	doc = append(doc, '{')
	for i, m := range members {
		if i > 0 {
			doc = append(doc, ',')
		}
		doc = append(append(append(doc, '"'), m.key...), `":"`...)
		if m.b64 {
			doc = base64.StdEncoding.AppendEncode(doc, m.val)
		} else {
			doc = append(doc, m.val...)
		}
		doc = append(doc, '"')
	}
	return append(doc, '}')
}

// packedBytes reads uvarint(length) || bytes.
func packedBytes(b []byte) (v, rest []byte, err error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) {
		return nil, nil, errPacked
	}
	return b[k : k+int(n)], b[k+int(n):], nil
}

// openIdentity opens a record's sealed identity into scratch and returns it as a string,
// unpacked when the record is in layout 3 (packed). scratch comes back for reuse, holding the
// opened bytes: the caller wipes it when done. An empty field is the empty string.
func (s *Store) openIdentity(scratch, sealed, ad []byte, packed bool) (string, []byte, error) {
	if len(sealed) == 0 {
		return "", scratch, nil
	}
	if cap(scratch) < len(sealed) { // too small for what opens: wiped, not left behind by openTo
		clear(scratch[:cap(scratch)])
		scratch = make([]byte, 0, len(sealed))
	}
	p, err := s.seal.openTo(scratch[:0], sealed, ad)
	if err != nil {
		return "", scratch, err
	}
	if !packed {
		return string(p), p, nil
	}
	id, err := unpackIdentity(nil, p)
	if err != nil {
		return "", p, err
	}
	out := string(id)
	clear(id)
	return out, p, nil
}
