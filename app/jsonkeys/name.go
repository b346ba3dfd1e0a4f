package jsonkeys

import (
	"strconv"
	"strings"
)

// NotShown stands in an error message for a key that Name does not quote.
const NotShown = "(a key that does not look like a field name, not shown)"

// Name quotes a key of a request body for an error message ("unknown field %s") when it looks
// like a field name: 1 to 24 ASCII letters and underscores, as every field of idvault's bodies
// is, so that a misspelt field ("test_mode", "identitys", "Test") is named. Any other key is
// NotShown: a key may be anything the client sent, a token, a code or a private identity pasted
// in the wrong place, and error messages never quote secrets (digits, '-', '+', '/' and '='
// of base64 and hex secrets, or their length, rule them out).
func Name(key string) string {
	if len(key) == 0 || len(key) > 24 {
		return NotShown
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_') {
			return NotShown
		}
	}
	return strconv.Quote(key)
}

// UnknownField reports whether err is encoding/json's refusal of an unknown field (a decoder
// with DisallowUnknownFields), with that field as Name shows it: encoding/json gives it only
// inside its error text, quoted.
func UnknownField(err error) (string, bool) {
	quoted, ok := strings.CutPrefix(err.Error(), "json: unknown field ")
	if !ok {
		return "", false
	}
	if key, err := strconv.Unquote(quoted); err == nil {
		return Name(key), true
	}
	return NotShown, true
}
