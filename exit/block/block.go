package block

import (
	"crypto/ed25519"
	"fmt"

	"golang.org/x/crypto/blake2b"
)

// Sizes of the fixed block fields.
const (
	HashSize      = 32
	SignatureSize = 64
	// serializationVersion is the only block format version.
	serializationVersion = 1
)

// Hash is a 32-byte block hash; device IDs and the trustchain ID are block
// hashes.
type Hash [HashSize]byte

// Block is a serialized trustchain entry (exit/FORMATS.md). Payload
// holds the raw payload; Action decodes it.
type Block struct {
	// Index is written as 0 by clients and ignored when read.
	Index        uint64
	TrustchainID Hash
	Nature       Nature
	Payload      []byte
	Author       Hash
	Signature    [SignatureSize]byte
}

// Parse decodes a serialized block. It checks the framing only; Action
// decodes the payload.
func Parse(b []byte) (*Block, error) {
	r := reader{b: b}
	if v := r.varint(); r.err == nil && v != serializationVersion {
		return nil, fmt.Errorf("parse block: %w: serialization version %d", ErrMalformed, v)
	}
	blk := &Block{}
	blk.Index = r.varint()
	r.fixed(blk.TrustchainID[:])
	blk.Nature = Nature(r.varint())
	size := r.varint()
	if r.err == nil && size > uint64(len(r.b)) {
		return nil, fmt.Errorf("parse block: %w: payload of %d bytes, %d left", ErrTruncated, size, len(r.b))
	}
	blk.Payload = append([]byte(nil), r.take(int(size))...)
	r.fixed(blk.Author[:])
	r.fixed(blk.Signature[:])
	if err := r.done(); err != nil {
		return nil, fmt.Errorf("parse block: %w", err)
	}
	return blk, nil
}

// Serialize encodes the block (exit/FORMATS.md).
func (b *Block) Serialize() []byte {
	out := make([]byte, 0, 2+HashSize+20+len(b.Payload)+HashSize+SignatureSize)
	out = AppendVarint(out, serializationVersion)
	out = AppendVarint(out, b.Index)
	out = append(out, b.TrustchainID[:]...)
	out = AppendVarint(out, uint64(b.Nature))
	out = AppendVarint(out, uint64(len(b.Payload)))
	out = append(out, b.Payload...)
	out = append(out, b.Author[:]...)
	return append(out, b.Signature[:]...)
}

// Hash returns H_32(varint(nature) || author || payload), the block ID
// (exit/FORMATS.md).
func (b *Block) Hash() Hash {
	h, _ := blake2b.New256(nil)
	h.Write(AppendVarint(nil, uint64(b.Nature)))
	h.Write(b.Author[:])
	h.Write(b.Payload)
	var out Hash
	h.Sum(out[:0])
	return out
}

// VerifySignature checks the Ed25519 signature over the block hash with
// the author's public signature key (the ephemeral delegation key for
// device creations).
func (b *Block) VerifySignature(pub ed25519.PublicKey) error {
	if len(pub) != ed25519.PublicKeySize {
		return fmt.Errorf("verify block signature: %w: public key of %d bytes", ErrInvalidSignature, len(pub))
	}
	h := b.Hash()
	if !ed25519.Verify(pub, h[:], b.Signature[:]) {
		return fmt.Errorf("verify %s block signature: %w", b.Nature, ErrInvalidSignature)
	}
	return nil
}

// Sign sets the signature to the Ed25519 signature of the block hash.
func (b *Block) Sign(priv ed25519.PrivateKey) {
	h := b.Hash()
	copy(b.Signature[:], ed25519.Sign(priv, h[:]))
}

// Action decodes the payload according to the nature.
func (b *Block) Action() (Action, error) {
	return ParsePayload(b.Nature, b.Payload)
}

// New returns an unsigned block carrying the action.
func New(trustchainID Hash, a Action, author Hash) *Block {
	return &Block{
		TrustchainID: trustchainID,
		Nature:       a.Nature(),
		Payload:      a.AppendPayload(nil),
		Author:       author,
	}
}
