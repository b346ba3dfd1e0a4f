// Package jsonw writes the JSON of idvault's most frequent answers without reflection, byte for
// byte as encoding/json writes them (its tests compare the two). On a known-email request,
// json.Marshal of the answer cost as much as reading the record.
package jsonw

import (
	"encoding/json"
)

// AppendString appends s as a JSON string exactly as encoding/json writes it: printable ASCII
// without '"', '\\', '<', '>' and '&' is copied; anything else goes through json.Marshal.
func AppendString(buf []byte, s string) []byte {
	if !allPlain(s) {
		quoted, _ := json.Marshal(s) // a string always marshals
		return append(buf, quoted...)
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// allPlain reports whether every byte of s is plain, eight bytes per test (the answers are
// mostly long base64 identities; a test per byte was a tenth of a list's CPU).
func allPlain(s string) bool {
	for len(s) >= 8 {
		if plain[s[0]]&plain[s[1]]&plain[s[2]]&plain[s[3]]&plain[s[4]]&plain[s[5]]&plain[s[6]]&plain[s[7]] == 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if plain[s[i]] == 0 {
			return false
		}
	}
	return true
}

// AppendField appends ,"key":value (first=true: without the comma) with value a JSON string.
// key must need no escaping.
func AppendField(buf []byte, first bool, key, value string) []byte {
	if !first {
		buf = append(buf, ',')
	}
	buf = append(buf, '"')
	buf = append(buf, key...)
	buf = append(buf, `":`...)
	return AppendString(buf, value)
}

// plain is 1 for the bytes encoding/json copies as they are, 0 for the others.
var plain = func() (t [256]uint8) {
	for b := 0x20; b < 0x7f; b++ {
		if b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
			t[b] = 1
		}
	}
	return t
}()
