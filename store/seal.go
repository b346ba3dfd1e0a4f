package store

import (
	"crypto/cipher"
	"crypto/rand"
	"fmt"

	"golang.org/x/crypto/chacha20poly1305"
)

// sealVersion is the first byte of every sealed value, so that the scheme can change later.
const sealVersion = 1

// sealer encrypts values at rest: version(1) || nonce(24) || XChaCha20-Poly1305(ct || tag).
type sealer struct {
	aead cipher.AEAD
}

func newSealer(mk *MasterKey) (*sealer, error) {
	aead, err := chacha20poly1305.NewX(mk.Derive("store seal")[:])
	if err != nil {
		return nil, fmt.Errorf("store: init sealer: %w", err)
	}
	return &sealer{aead: aead}, nil
}

// seal encrypts plain; ad binds the value to where it is stored (bucket and key).
func (s *sealer) seal(plain, ad []byte) ([]byte, error) {
	out := make([]byte, 1+chacha20poly1305.NonceSizeX, 1+chacha20poly1305.NonceSizeX+len(plain)+s.aead.Overhead())
	out[0] = sealVersion
	if _, err := rand.Read(out[1:]); err != nil {
		return nil, fmt.Errorf("store: seal: %w", err)
	}
	return s.aead.Seal(out, out[1:1+chacha20poly1305.NonceSizeX], plain, ad), nil
}

// sealedSize is the size of the sealed form of a value of n bytes (0 stays 0: a record's empty
// identity is stored empty).
func sealedSize(n int) int {
	if n == 0 {
		return 0
	}
	return 1 + chacha20poly1305.NonceSizeX + n + chacha20poly1305.Overhead
}

// appendSeal appends the sealed form of plain (sealedSize(len(plain)) bytes, the layout of
// seal) to dst.
func (s *sealer) appendSeal(dst, plain, ad []byte) ([]byte, error) {
	start := len(dst)
	dst = append(dst, sealVersion)
	dst = append(dst, make([]byte, chacha20poly1305.NonceSizeX)...)
	nonce := dst[start+1 : start+1+chacha20poly1305.NonceSizeX]
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("store: seal: %w", err)
	}
	// Seal appends after the nonce (its output starts at len(dst)), so the two do not overlap.
	return s.aead.Seal(dst, nonce, plain, ad), nil
}

// open decrypts a value made by seal with the same ad.
func (s *sealer) open(sealed, ad []byte) ([]byte, error) {
	return s.openTo(nil, sealed, ad)
}

// openTo is open appending the clear value to dst (which may be reused between calls).
func (s *sealer) openTo(dst, sealed, ad []byte) ([]byte, error) {
	if len(sealed) < 1+chacha20poly1305.NonceSizeX+s.aead.Overhead() || sealed[0] != sealVersion {
		return nil, ErrSealed
	}
	nonce := sealed[1 : 1+chacha20poly1305.NonceSizeX]
	plain, err := s.aead.Open(dst, nonce, sealed[1+chacha20poly1305.NonceSizeX:], ad)
	if err != nil {
		return nil, ErrSealed
	}
	return plain, nil
}

// adFor builds the associated data for a sealed field: bucket, key and field name.
func adFor(bucket, key []byte, field string) []byte {
	return appendAD(make([]byte, 0, len(bucket)+len(key)+len(field)+2), bucket, key, field)
}

// appendAD is adFor appending to dst.
func appendAD(dst, bucket, key []byte, field string) []byte {
	dst = append(dst, bucket...)
	dst = append(dst, 0)
	dst = append(dst, key...)
	dst = append(dst, 0)
	return append(dst, field...)
}
