package encryption

import (
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"hash"

	"golang.org/x/crypto/blake2b"
	"golang.org/x/crypto/chacha20poly1305"
)

// newAEAD returns an XChaCha20-Poly1305 instance for a 32-byte key.
func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) != KeySize {
		return nil, fmt.Errorf("%w: got %d bytes, want %d", ErrInvalidKey, len(key), KeySize)
	}
	return chacha20poly1305.NewX(key)
}

// ivDeriver computes deriveIV(seed, i) = H_24(seed || uint64_le(i)) without
// allocating per call.
type ivDeriver struct {
	h   hash.Hash
	buf [8]byte
	out [ivSize]byte
}

func newIVDeriver() *ivDeriver {
	h, err := blake2b.New(ivSize, nil)
	if err != nil {
		panic("encryption: invalid blake2b size")
	}
	return &ivDeriver{h: h}
}

// derive returns the IV of chunk index for seed. The result is only valid
// until the next call.
func (d *ivDeriver) derive(seed []byte, index uint64) []byte {
	d.h.Reset()
	d.h.Write(seed)
	binary.LittleEndian.PutUint64(d.buf[:], index)
	d.h.Write(d.buf[:])
	return d.h.Sum(d.out[:0])
}

// DeriveIV returns deriveIV(seed, index) = H_24(seed || uint64_le(index)),
// the IV of chunk index in the stream formats (exit/FORMATS.md).
func DeriveIV(seed []byte, index uint64) [IVSize]byte {
	var iv [IVSize]byte
	copy(iv[:], newIVDeriver().derive(seed, index))
	return iv
}

// DeriveSubkey returns the data key of a transparent-session resource
// (formats 9 to 11): H_32(sessionKey || seed).
func DeriveSubkey(sessionKey []byte, seed SimpleID) ([]byte, error) {
	if len(sessionKey) != KeySize {
		return nil, fmt.Errorf("derive subkey: %w: got %d bytes, want %d", ErrInvalidKey, len(sessionKey), KeySize)
	}
	k := deriveSubkey(sessionKey, seed)
	return k[:], nil
}

// deriveSubkey is DeriveSubkey for a key of KeySize bytes, hashed on the stack (BLAKE2b-256
// unkeyed is H_32) without allocating; the copy of the key it hashed is cleared.
func deriveSubkey(sessionKey []byte, seed SimpleID) [KeySize]byte {
	var in [KeySize + IDSize]byte
	copy(in[:], sessionKey)
	copy(in[KeySize:], seed[:])
	sum := blake2b.Sum256(in[:])
	clear(in[:])
	return sum
}
