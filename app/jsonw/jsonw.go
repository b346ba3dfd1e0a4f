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
	for i := 0; i < len(s); i++ {
		if !plain[s[i]] {
			quoted, _ := json.Marshal(s) // a string always marshals
			return append(buf, quoted...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
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

// plain marks the bytes encoding/json copies as they are.
var plain = func() (t [256]bool) {
	for b := 0x20; b < 0x7f; b++ {
		t[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return t
}()
