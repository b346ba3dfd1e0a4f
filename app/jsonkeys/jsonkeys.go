// Package jsonkeys finds what encoding/json lets pass silently in a JSON object: a key given
// twice, of which only the last value would count ({"test": true, "test": false} made a
// production app; {"identities": [...], "identities": []} was an empty import). The admin API,
// the exit server's bodies and the exit client's identity entries refuse such objects; the
// Tanker-compatible identity server and verification API refuse a repeat of a key they read.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Repeated returns the first top-level key given twice in the JSON object raw, or false when
// none is, or when raw is not an object (the decoder then says what is wrong). With foldCase, keys
// are compared as encoding/json matches struct fields (Fold), without regard to case; without
// it, as a map would hold them.
func Repeated(raw []byte, foldCase bool) (string, bool) {
	return repeated(raw, foldCase, nil)
}

// RepeatedOf is Repeated counting only the keys in known (as the request names them): the
// Tanker-compatible bodies ignore unknown keys, even repeated ones, but must not let a second
// value of a key they read win silently.
func RepeatedOf(raw []byte, foldCase bool, known ...string) (string, bool) {
	set := make(map[string]bool, len(known))
	for _, k := range known {
		if foldCase {
			k = fold(k)
		}
		set[k] = true
	}
	return repeated(raw, foldCase, set)
}

// repeated is Repeated, counting only the keys of known when it is not nil.
func repeated(raw []byte, foldCase bool, known map[string]bool) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		key, _ := t.(string)
		k := key
		if foldCase {
			k = fold(key)
		}
		if seen[k] && (known == nil || known[k]) {
			return key, true
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return "", false
		}
	}
	return "", false
}

// fold is key folded as encoding/json folds a key to match it to a struct field: ASCII letters
// upper-cased, any other character replaced by the smallest of its Unicode simple case folds.
// strings.ToLower is not the same: encoding/json reads "teſt" (U+017F, long s) as the field
// "test" and "K" (U+212A, Kelvin sign) as "k", so {"teſt": true, "test": false} would pass
// as a body without a repeat while its last value silently won.
func fold(key string) string {
	var b strings.Builder
	b.Grow(len(key))
	for _, r := range key {
		switch {
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
		default:
			for {
				f := unicode.SimpleFold(r)
				if f <= r {
					r = f
					break
				}
				r = f
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
