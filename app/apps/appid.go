package apps

import (
	"encoding/base64"
	"errors"
	"net/url"
	"strings"
)

// ErrInvalidAppID: the string is not the base64 of 32 bytes.
var ErrInvalidAppID = errors.New("apps: invalid app ID")

// ParseID decodes an app ID as clients send it: standard or URL-safe base64, padded or not,
// with the padding possibly percent-encoded (%3D).
func ParseID(s string) ([]byte, error) {
	if strings.Contains(s, "%") {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, ErrInvalidAppID
		}
		s = u
	}
	s = strings.TrimRight(strings.TrimSpace(s), "=")
	enc := base64.RawStdEncoding
	if strings.ContainsAny(s, "-_") {
		enc = base64.RawURLEncoding
	}
	id, err := enc.DecodeString(s)
	if err != nil || len(id) != 32 {
		return nil, ErrInvalidAppID
	}
	return id, nil
}

// FormatID is the canonical text form of an app ID: standard base64 with padding, as the
// Tanker dashboard shows it and identities carry it.
func FormatID(id []byte) string { return base64.StdEncoding.EncodeToString(id) }

// URLID is the form to put in URL paths: URL-safe base64 without padding.
func URLID(id []byte) string { return base64.RawURLEncoding.EncodeToString(id) }
