package records

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Text forms of a ciphertext in a record (--encoding) and of a clear value (--clear-encoding).
const (
	EncodingBase64 = "base64"
	EncodingHex    = "hex"
	EncodingText   = "text" // clear values only: the bytes themselves, which must be UTF-8
)

// errNotText is the clear value of a field that is not UTF-8 under --clear-encoding text.
var errNotText = errors.New("the clear bytes are not UTF-8 text; use --clear-encoding base64 or hex")

// DecodeCiphertext turns the text form of a ciphertext into its bytes. base64 accepts the
// standard and the URL-safe alphabets, padded or not (the SDKs' toBase64 writes standard,
// padded base64; some apps store URL-safe, unpadded text); a value mixing the two alphabets
// is refused. hex accepts either case, and PostgreSQL's bytea output form with its leading
// `\x`. The error never quotes the value.
func DecodeCiphertext(encoding string, text []byte) ([]byte, error) {
	return decodeCiphertextTo(nil, encoding, text)
}

// decodeCiphertextTo is DecodeCiphertext with the bytes taken from mem (nil: allocated).
func decodeCiphertextTo(mem *arena, encoding string, text []byte) ([]byte, error) {
	switch encoding {
	case EncodingHex:
		text = bytes.TrimPrefix(text, []byte(`\x`))
		out := mem.alloc(hex.DecodedLen(len(text)))[:hex.DecodedLen(len(text))]
		if _, err := hex.Decode(out, text); err != nil {
			return nil, fmt.Errorf("the value is not hex: %s", codecProblem(err))
		}
		return out, nil
	case EncodingBase64, "":
		trimmed := bytes.TrimRight(text, "=")
		if len(text)-len(trimmed) > 2 {
			return nil, errors.New("the value is not base64: too much padding")
		}
		// The standard alphabet first: the usual case costs one pass. A value it refuses is
		// looked at again for the URL-safe alphabet.
		out := mem.alloc(base64.RawStdEncoding.DecodedLen(len(trimmed)))[:base64.RawStdEncoding.DecodedLen(len(trimmed))]
		n, err := base64.RawStdEncoding.Decode(out, trimmed)
		if err != nil && bytes.ContainsAny(trimmed, "-_") {
			if bytes.ContainsAny(trimmed, "+/") {
				return nil, errors.New("the value is not base64: it mixes the standard and URL-safe alphabets")
			}
			n, err = base64.RawURLEncoding.Decode(out, trimmed)
		}
		if err != nil {
			return nil, fmt.Errorf("the value is not base64: %s", codecProblem(err))
		}
		return out[:n], nil
	}
	return nil, fmt.Errorf("unknown encoding %q: want base64 or hex", encoding)
}

// codecProblem names where a decoding error is, without the input.
func codecProblem(err error) string {
	var b64 base64.CorruptInputError
	var hx hex.InvalidByteError
	switch {
	case errors.As(err, &b64):
		return fmt.Sprintf("bad character or length at byte %d", int64(b64))
	case errors.As(err, &hx):
		return "a character that is not a hex digit"
	case errors.Is(err, hex.ErrLength):
		return "odd length"
	}
	return "malformed"
}

// EncodeClear appends the text form of a clear value to dst: the bytes themselves for text
// (errNotText unless they are UTF-8), standard padded base64, or lower-case hex.
func EncodeClear(dst []byte, encoding string, clear []byte) ([]byte, error) {
	switch encoding {
	case EncodingText, "":
		if !utf8.Valid(clear) {
			return dst, errNotText
		}
		return append(dst, clear...), nil
	case EncodingBase64:
		return base64.StdEncoding.AppendEncode(dst, clear), nil
	case EncodingHex:
		return hex.AppendEncode(dst, clear), nil
	}
	return dst, fmt.Errorf("unknown clear encoding %q: want text, base64 or hex", encoding)
}

// headerText is the length of text from which CiphertextHeader decodes only the two ends.
const headerText = 256

// CiphertextHeader decodes only what identifies a ciphertext's key from its text form: the
// whole value when short, otherwise its first 48 bytes (every format's header) followed by its
// last 16 (where formats 1, 2, 3 and 6 keep their resource ID), which
// encryption.ExtractResourceID reads as it reads the whole ciphertext. The middle is not
// decoded, so a bad character there goes unnoticed: this is for the audit, which reads a few
// dozen bytes of each value.
func CiphertextHeader(encoding string, text []byte) ([]byte, error) {
	return ciphertextHeader(nil, encoding, text)
}

// HeaderReader is CiphertextHeader for a caller that reads many headers, one at a time (the
// audit): each header is valid until the next call, and the bytes of all of them come from one
// buffer.
type HeaderReader struct{ mem arena }

// Header is CiphertextHeader of text, valid until the next call.
func (h *HeaderReader) Header(encoding string, text []byte) ([]byte, error) {
	if h.mem.chunk == nil {
		h.mem.chunk = make([]byte, 0, 1024)
	}
	h.mem = arena{chunk: h.mem.chunk[:0]} // the header is read at once: reuse
	return ciphertextHeader(&h.mem, encoding, text)
}

// ciphertextHeader is CiphertextHeader with its bytes from mem (nil: allocated).
func ciphertextHeader(mem *arena, encoding string, text []byte) ([]byte, error) {
	if encoding == EncodingHex {
		text = bytes.TrimPrefix(text, []byte(`\x`))
	} else {
		text = bytes.TrimRight(text, "=")
	}
	if len(text) <= headerText {
		return decodeCiphertextTo(mem, encoding, text)
	}
	const head, tail = 48, 16
	out := mem.alloc(head + tail)
	switch encoding {
	case EncodingHex:
		h, err := decodeCiphertextTo(mem, EncodingHex, text[:2*head])
		if err != nil {
			return nil, err
		}
		t, err := decodeCiphertextTo(mem, EncodingHex, text[len(text)-2*tail:])
		if err != nil {
			return nil, err
		}
		return append(append(out, h...), t...), nil
	case EncodingBase64, "":
		n := len(text) * 3 / 4 // decoded length (unpadded)
		start := (n - tail) / 3 * 3
		h, err := decodeCiphertextTo(mem, EncodingBase64, text[:head/3*4])
		if err != nil {
			return nil, err
		}
		t, err := decodeCiphertextTo(mem, EncodingBase64, text[start/3*4:])
		if err != nil {
			return nil, err
		}
		if len(t) < tail {
			return nil, errors.New("the value is not base64: bad length")
		}
		return append(append(out, h...), t[len(t)-tail:]...), nil
	}
	return nil, fmt.Errorf("unknown encoding %q: want base64 or hex", encoding)
}
