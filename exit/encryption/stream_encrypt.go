package encryption

import (
	"crypto/cipher"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// EncryptWriter encrypts a stream format (4, 8 or 11) as data is written.
// It holds one chunk in memory. Close must be called to write the final
// chunk(s); it does not close the underlying writer.
type EncryptWriter struct {
	w       io.Writer
	v       Version
	aead    cipher.AEAD
	p       *encryptParams
	rid     ResourceID
	size    int    // encrypted chunk size
	capa    int    // clear bytes in a full chunk
	dataOff int    // offset of clear data in buf
	buf     []byte // one encrypted chunk
	n       int    // clear bytes buffered
	total   uint64 // clear bytes written so far
	index   uint64
	ivs     *ivDeriver
	header  []byte // format 11 stream header, also its AD
	seed    [ivSize]byte
	started bool
	err     error
}

// errWriterClosed is returned by Write after Close.
var errWriterClosed = errors.New("write to closed encrypt writer")

// newEncryptWriter builds a writer for a stream format. key is the
// resource key (4, 8) or the session key (11).
func newEncryptWriter(w io.Writer, v Version, key []byte, p *encryptParams) (*EncryptWriter, error) {
	e := &EncryptWriter{w: w, v: v, p: p, size: p.chunkSize, ivs: newIVDeriver()}
	switch v {
	case V4, V8:
		e.rid = ResourceID{ID: p.resourceID}
		e.dataOff = v48Header
		e.capa = e.size - v48Header - tagSize
		if v == V8 {
			e.capa-- // room for the 0x80 marker
		}
	case V11:
		e.rid = ResourceID{ID: p.sessionID, Composite: true}
		if err := p.random(e.rid.Seed[:]); err != nil {
			return nil, err
		}
		sub, err := DeriveSubkey(key, e.rid.Seed)
		if err != nil {
			return nil, err
		}
		key = sub
		e.header = make([]byte, 0, v11Header)
		e.header = append(e.header, byte(V11))
		e.header = append(e.header, e.rid.ID[:]...)
		e.header = append(e.header, e.rid.Seed[:]...)
		e.header = binary.LittleEndian.AppendUint32(e.header, uint32(e.size))
		copy(e.seed[:], e.rid.ID[:])
		e.dataOff = 4
		e.capa = e.size - v11Chunk
	default:
		return nil, fmt.Errorf("%w: %s is not a stream format", ErrInvalidArgument, v)
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	e.aead = aead
	e.buf = make([]byte, e.size)
	return e, nil
}

// ResourceID returns the resource ID of the stream being written.
func (e *EncryptWriter) ResourceID() ResourceID { return e.rid }

// Write buffers p and writes every chunk that fills up.
func (e *EncryptWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	written := 0
	for len(p) > 0 {
		c := copy(e.buf[e.dataOff+e.n:e.dataOff+e.capa], p)
		e.n += c
		e.total += uint64(c)
		written += c
		p = p[c:]
		if e.n == e.capa {
			// A full chunk never carries padding, so it can go now.
			if err := e.emit(e.n, 0); err != nil {
				e.err = err
				return written, err
			}
		}
	}
	return written, nil
}

// Close writes the final chunk and any padding-only chunks.
func (e *EncryptWriter) Close() error {
	if e.err != nil {
		if e.err == errWriterClosed {
			return nil
		}
		return e.err
	}
	err := e.finish()
	if err != nil {
		e.err = err
		return err
	}
	e.err = errWriterClosed
	return nil
}

func (e *EncryptWriter) finish() error {
	if e.v == V4 {
		return e.emit(e.n, 0)
	}
	left := PaddedFromClearSize(e.total, e.p.padding) - e.total - 1
	data := e.n
	for {
		pad := int(min(uint64(e.capa-data), left))
		left -= uint64(pad)
		if err := e.emit(data, pad); err != nil {
			return err
		}
		if left == 0 && data+pad < e.capa {
			return nil
		}
		data = 0
	}
}

// emit encrypts and writes one chunk holding the first data clear bytes of
// the buffer and pad padding bytes.
func (e *EncryptWriter) emit(data, pad int) error {
	if !e.started && e.v == V11 {
		if _, err := e.w.Write(e.header); err != nil {
			return fmt.Errorf("encrypt %s: write header: %w", e.v, err)
		}
	}
	e.started = true
	var out []byte
	switch e.v {
	case V4, V8:
		h := e.buf[:v48Header]
		h[0] = byte(e.v)
		binary.LittleEndian.PutUint32(h[1:], uint32(e.size))
		copy(h[5:], e.rid.ID[:])
		if err := e.p.random(h[5+IDSize:]); err != nil {
			return err
		}
		plain := e.buf[v48Header : v48Header+data]
		var ad []byte
		if e.v == V8 {
			plain = append(plain, 0x80)
			for range pad {
				plain = append(plain, 0)
			}
			ad = h
		}
		iv := e.ivs.derive(h[5+IDSize:], e.index)
		out = e.aead.Seal(plain[:0], iv, plain, ad)
		out = e.buf[:v48Header+len(out)]
	case V11:
		if pad > 0 {
			copy(e.buf[4+pad:], e.buf[4:4+data])
			clear(e.buf[4 : 4+pad])
		}
		binary.LittleEndian.PutUint32(e.buf, uint32(pad))
		plain := e.buf[:4+pad+data]
		iv := e.ivs.derive(e.seed[:], e.index)
		out = e.aead.Seal(plain[:0], iv, plain, e.header)
	}
	e.index++
	e.n = 0
	if _, err := e.w.Write(out); err != nil {
		return fmt.Errorf("encrypt %s: write chunk %d: %w", e.v, e.index-1, err)
	}
	return nil
}
