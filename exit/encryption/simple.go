package encryption

import (
	"fmt"
)

// simpleOverhead is the constant overhead of a simple format, not counting
// padding (exit/FORMATS.md); for streams it is 0.
func simpleOverhead(v Version) int {
	switch v {
	case V1, V2:
		return 1 + ivSize + tagSize
	case V3, V6:
		return 1 + tagSize
	case V5, V7:
		return 1 + IDSize + ivSize + tagSize
	case V9, V10:
		return 1 + 2*IDSize + tagSize
	}
	return 0
}

// simpleLayout locates the parts of a simple-format buffer.
type simpleLayout struct {
	iv     [ivSize]byte
	sealed []byte // ciphertext || tag
	ad     []byte
}

// splitSimple returns the layout of data, which must start with a simple
// format's version byte.
func splitSimple(v Version, data []byte) (simpleLayout, error) {
	var l simpleLayout
	if len(data) < simpleOverhead(v) {
		return l, fmt.Errorf("%w: %d bytes, need at least %d", ErrTruncated, len(data), simpleOverhead(v))
	}
	switch v {
	case V1:
		copy(l.iv[:], data[len(data)-ivSize:])
		l.sealed = data[1 : len(data)-ivSize]
	case V2:
		copy(l.iv[:], data[1:])
		l.sealed = data[1+ivSize:]
	case V3:
		l.sealed = data[1:]
	case V5:
		copy(l.iv[:], data[1+IDSize:])
		l.sealed = data[1+IDSize+ivSize:]
		l.ad = data[1 : 1+IDSize]
	case V6:
		l.sealed = data[1:]
		l.ad = data[:1]
	case V7:
		copy(l.iv[:], data[1+IDSize:])
		l.sealed = data[1+IDSize+ivSize:]
		l.ad = data[:1+IDSize]
	case V9, V10:
		copy(l.iv[:], data[1:1+IDSize])
		l.sealed = data[1+2*IDSize:]
		l.ad = data[:1+2*IDSize]
	default:
		return l, fmt.Errorf("%w: %s is not a simple format", ErrUnknownFormat, v)
	}
	return l, nil
}

// decryptSimple decrypts a simple-format buffer with the AEAD key (the
// derived subkey for formats 9 and 10): into a new buffer, or in data's own
// bytes when inPlace (the clear text is then a part of data).
func decryptSimple(v Version, key, data []byte, inPlace bool) ([]byte, error) {
	l, err := splitSimple(v, data)
	if err != nil {
		return nil, err
	}
	dst := l.sealed[:0] // the AEAD opens in place when dst starts where the ciphertext does
	if !inPlace {
		dst = make([]byte, 0, len(l.sealed)-tagSize)
	}
	out, err := openSimple(dst, v, key, l)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// appendDecryptSimple is decryptSimple that opens data into dst's spare capacity and
// returns dst extended by the clear bytes (dst's length unchanged on an error).
func appendDecryptSimple(dst []byte, v Version, key, data []byte) ([]byte, error) {
	l, err := splitSimple(v, data)
	if err != nil {
		return dst, err
	}
	return openSimple(dst, v, key, l)
}

// openSimple opens the sealed part of l with the AEAD key, appending the clear bytes (unpadded
// for the padded formats) to dst; on an error it returns dst with its length unchanged.
func openSimple(dst []byte, v Version, key []byte, l simpleLayout) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return dst, err
	}
	n := len(dst)
	out, err := aead.Open(dst, l.iv[:], l.sealed, l.ad)
	if err != nil {
		return dst, ErrDecryptionFailed
	}
	if v.IsPadded() {
		clear, err := unpad(out[n:])
		if err != nil {
			return dst, err
		}
		return out[:n+len(clear)], nil
	}
	return out, nil
}

// encryptSimple encrypts clear in format v. For 9 and 10 key is the
// session key; the seed is drawn from opts.
func encryptSimple(v Version, key, clear []byte, o *encryptParams) ([]byte, ResourceID, error) {
	var rid ResourceID
	plain := clear
	if v.IsPadded() {
		plain = appendPadded(make([]byte, 0, PaddedFromClearSize(uint64(len(clear)), o.padding)), clear, o.padding)
	}
	out := make([]byte, 0, simpleOverhead(v)+len(plain))
	out = append(out, byte(v))
	var iv [ivSize]byte
	var ad []byte
	switch v {
	case V2:
		if err := o.random(iv[:]); err != nil {
			return nil, rid, err
		}
		out = append(out, iv[:]...)
	case V3:
	case V6:
		ad = out[:1]
	case V5, V7:
		rid.ID = o.resourceID
		out = append(out, rid.ID[:]...)
		if err := o.random(iv[:]); err != nil {
			return nil, rid, err
		}
		out = append(out, iv[:]...)
		if v == V5 {
			ad = out[1 : 1+IDSize]
		} else {
			ad = out[:1+IDSize]
		}
	case V9, V10:
		rid.Composite = true
		rid.ID = o.sessionID
		if err := o.random(rid.Seed[:]); err != nil {
			return nil, rid, err
		}
		sub, err := DeriveSubkey(key, rid.Seed)
		if err != nil {
			return nil, rid, err
		}
		key = sub
		copy(iv[:], rid.ID[:])
		out = append(out, rid.ID[:]...)
		out = append(out, rid.Seed[:]...)
		ad = out[:1+2*IDSize]
	default:
		return nil, rid, fmt.Errorf("%w: cannot encrypt %s", ErrInvalidArgument, v)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, rid, err
	}
	out = aead.Seal(out, iv[:], plain, ad)
	if v == V2 || v == V3 || v == V6 {
		copy(rid.ID[:], out[len(out)-tagSize:])
	}
	return out, rid, nil
}
