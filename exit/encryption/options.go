package encryption

import (
	"crypto/rand"
	"fmt"
	"io"
)

// Default limits applied when decrypting.
const (
	// DefaultMaxChunkSize bounds the encrypted chunk size a stream header
	// may declare (16 MiB; the SDKs write 1 MiB chunks).
	DefaultMaxChunkSize = 16 << 20
	// DefaultMaxSimpleSize bounds how much NewDecryptReader buffers for a
	// simple (non-stream) format (64 MiB).
	DefaultMaxSimpleSize = 64 << 20
)

// Limits bounds the memory that decryption may allocate because of what the
// input declares. Zero fields take the defaults.
type Limits struct {
	// MaxChunkSize is the largest encrypted chunk size accepted in a stream
	// header. A stream decryptor holds at most one chunk of this size.
	MaxChunkSize int
	// MaxSimpleSize is the largest simple-format buffer NewDecryptReader
	// reads into memory.
	MaxSimpleSize int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxChunkSize <= 0 {
		l.MaxChunkSize = DefaultMaxChunkSize
	}
	if l.MaxSimpleSize <= 0 {
		l.MaxSimpleSize = DefaultMaxSimpleSize
	}
	return l
}

// EncryptOptions parameterises Encrypt and NewEncryptWriter. The zero value
// gives the SDK defaults: automatic padding, 1 MiB chunks, random IDs.
type EncryptOptions struct {
	// Padding applies to formats 6, 7, 8, 10 and 11.
	Padding Padding
	// ChunkSize is the encrypted chunk size of formats 4, 8 and 11
	// (0 means DefaultChunkSize).
	ChunkSize int
	// ResourceID is the explicit resource ID of formats 4, 5, 7 and 8 (the
	// manual session ID). Nil draws a random one.
	ResourceID *SimpleID
	// SessionID is the session ID of formats 9 to 11. Nil draws a random
	// one.
	SessionID *SimpleID
	// Rand supplies IVs, seeds and random IDs; nil means crypto/rand.
	Rand io.Reader
}

// encryptParams is EncryptOptions with defaults applied and IDs drawn.
type encryptParams struct {
	padding    Padding
	chunkSize  int
	resourceID SimpleID
	sessionID  SimpleID
	rand       io.Reader
}

func (p *encryptParams) random(b []byte) error {
	if _, err := io.ReadFull(p.rand, b); err != nil {
		return fmt.Errorf("read random bytes: %w", err)
	}
	return nil
}

func (o EncryptOptions) params(v Version) (*encryptParams, error) {
	if !v.CanEncrypt() {
		return nil, fmt.Errorf("%w: cannot encrypt format %d", ErrInvalidArgument, uint8(v))
	}
	p := &encryptParams{padding: o.Padding, chunkSize: o.ChunkSize, rand: o.Rand}
	if p.rand == nil {
		p.rand = rand.Reader
	}
	if p.chunkSize == 0 {
		p.chunkSize = DefaultChunkSize
	}
	if v.IsStream() && (p.chunkSize < minChunkSize(v) || int64(p.chunkSize) > 1<<32-1) {
		return nil, fmt.Errorf("%w: chunk size %d out of range [%d, 2^32-1] for %s",
			ErrInvalidArgument, p.chunkSize, minChunkSize(v), v)
	}
	if o.ResourceID != nil {
		p.resourceID = *o.ResourceID
	} else if err := p.random(p.resourceID[:]); err != nil {
		return nil, err
	}
	if o.SessionID != nil {
		p.sessionID = *o.SessionID
	} else if err := p.random(p.sessionID[:]); err != nil {
		return nil, err
	}
	return p, nil
}

// Option adjusts decryption.
type Option func(*decryptConfig)

type decryptConfig struct {
	limits    Limits
	interrupt func() // WithReadAhead
}

// WithLimits replaces the default Limits.
func WithLimits(l Limits) Option {
	return func(c *decryptConfig) { c.limits = l }
}

func newDecryptConfig(opts []Option) decryptConfig {
	var c decryptConfig
	for _, o := range opts {
		o(&c)
	}
	c.limits = c.limits.withDefaults()
	return c
}
