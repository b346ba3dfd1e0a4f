package encryption

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"io"
)

// initialChunkBuffer is the first allocation of a stream decrypter; the
// buffer then grows, as data actually arrives, up to one encrypted chunk.
const initialChunkBuffer = 32 << 10

// streamDecrypter decrypts formats 4, 8 and 11 chunk by chunk. It holds one
// chunk buffer, decrypts in place and releases a chunk's plaintext only
// after its tag verified.
type streamDecrypter struct {
	src   io.Reader
	v     Version
	aead  cipher.AEAD
	size  int    // encrypted chunk size from the header
	buf   []byte // chunk buffer, grows up to size
	out   []byte // verified plaintext not yet returned
	err   error  // sticky: io.EOF after the final chunk, or the failure
	index uint64
	ivs   *ivDeriver
	// header is the first chunk header (4, 8) or the stream header (11).
	header      []byte
	seed        [ivSize]byte // format 11: sessionID || 8 zero bytes
	onlyPadding bool         // a chunk carried padding: later ones must be empty
	final       bool         // the short final chunk was processed
}

// streamChunkSize returns the encrypted chunk size declared in a stream
// header and checks it against the format minimum and the limit.
func streamChunkSize(v Version, header []byte, lim Limits) (int, error) {
	var size uint32
	if v == V11 {
		size = binary.LittleEndian.Uint32(header[1+2*IDSize:])
	} else {
		size = binary.LittleEndian.Uint32(header[1:])
	}
	if int64(size) < int64(minChunkSize(v)) {
		return 0, fmt.Errorf("%w: chunk size %d below minimum %d", ErrDecryptionFailed, size, minChunkSize(v))
	}
	if int64(size) > int64(lim.MaxChunkSize) {
		return 0, fmt.Errorf("%w: chunk size %d above maximum %d", ErrLimitExceeded, size, lim.MaxChunkSize)
	}
	return int(size), nil
}

// newStreamDecrypter returns a decrypter for a stream whose first header
// (45 bytes for 4 and 8, 37 bytes for 11) was already read from src. key is
// the AEAD key (the subkey for format 11).
func newStreamDecrypter(src io.Reader, v Version, header, key []byte, lim Limits) (*streamDecrypter, error) {
	size, err := streamChunkSize(v, header, lim)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	d := &streamDecrypter{
		src:    src,
		v:      v,
		aead:   aead,
		size:   size,
		buf:    make([]byte, min(size, initialChunkBuffer)),
		ivs:    newIVDeriver(),
		header: append([]byte(nil), header...),
	}
	if v == V11 {
		copy(d.seed[:], header[1:1+IDSize])
	}
	return d, nil
}

// Read implements io.Reader. After the last byte it returns io.EOF; a
// truncated, reordered or tampered stream yields an error instead.
func (d *streamDecrypter) Read(p []byte) (int, error) {
	for len(d.out) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		d.err = d.next()
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

// WriteTo implements io.WriterTo, writing each verified chunk straight
// from the chunk buffer.
func (d *streamDecrypter) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for {
		if len(d.out) > 0 {
			n, err := w.Write(d.out)
			total += int64(n)
			d.out = d.out[n:]
			if err != nil {
				return total, err
			}
			continue
		}
		if d.err != nil {
			if d.err == io.EOF {
				return total, nil
			}
			return total, d.err
		}
		d.err = d.next()
	}
}

// next decrypts one chunk into d.out, or returns io.EOF after the final
// chunk.
func (d *streamDecrypter) next() error {
	if d.final {
		return io.EOF
	}
	var err error
	if d.v == V11 {
		err = d.nextV11()
	} else {
		err = d.nextV4V8()
	}
	if err != nil {
		d.out = nil
		return fmt.Errorf("decrypt %s chunk %d: %w", d.v, d.index, err)
	}
	d.index++
	return nil
}

// fill reads up to d.size bytes into d.buf starting at off, growing the
// buffer as data arrives. It returns the number of bytes in the buffer; a
// result below d.size means the source ended.
func (d *streamDecrypter) fill(off int) (int, error) {
	n := off
	for n < d.size {
		if n == len(d.buf) {
			grown := make([]byte, min(d.size, 2*len(d.buf)))
			copy(grown, d.buf[:n])
			d.buf = grown
		}
		m, err := io.ReadFull(d.src, d.buf[n:])
		n += m
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("read encrypted stream: %w", err)
		}
	}
	return n, nil
}

func (d *streamDecrypter) nextV11() error {
	n, err := d.fill(0)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: stream ended without its final chunk", ErrTruncated)
	}
	if n < v11Chunk {
		return fmt.Errorf("%w: missing chunk metadata", ErrTruncated)
	}
	iv := d.ivs.derive(d.seed[:], d.index)
	pt, err := d.aead.Open(d.buf[:0], iv, d.buf[:n], d.header)
	if err != nil {
		return ErrDecryptionFailed
	}
	padLen := uint64(binary.LittleEndian.Uint32(pt))
	if padLen > uint64(len(pt)-4) {
		return fmt.Errorf("%w: invalid padding size value", ErrBadPadding)
	}
	data := pt[4+padLen:]
	if d.onlyPadding && len(data) > 0 {
		return fmt.Errorf("%w: data after padding", ErrBadPadding)
	}
	if padLen > 0 {
		d.onlyPadding = true
	}
	d.out = data
	d.final = n < d.size
	return nil
}

func (d *streamDecrypter) nextV4V8() error {
	off := 0
	if d.index == 0 {
		off = copy(d.buf, d.header)
	}
	n, err := d.fill(off)
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: stream ended without its final chunk", ErrTruncated)
	}
	if n < v48Header+tagSize {
		return fmt.Errorf("%w: %d-byte chunk", ErrTruncated, n)
	}
	hdr := d.buf[:v48Header]
	if d.index > 0 {
		// Version, chunk size and resource ID must repeat; the IV seed
		// (last 24 bytes) is fresh per chunk.
		if !bytes.Equal(hdr[:v48Header-ivSize], d.header[:v48Header-ivSize]) {
			return fmt.Errorf("%w: version/resourceId/encryptedChunkSize mismatch in headers", ErrDecryptionFailed)
		}
	}
	var ad []byte
	if d.v == V8 {
		ad = hdr
	}
	iv := d.ivs.derive(hdr[v48Header-ivSize:], d.index)
	pt, err := d.aead.Open(d.buf[v48Header:v48Header], iv, d.buf[v48Header:n], ad)
	if err != nil {
		return ErrDecryptionFailed
	}
	if d.v == V8 {
		data, err := unpad(pt)
		if err != nil {
			return err
		}
		if d.onlyPadding && len(data) > 0 {
			return fmt.Errorf("%w: data after padding", ErrBadPadding)
		}
		if len(data) < len(pt)-1 {
			d.onlyPadding = true
		}
		pt = data
	}
	d.out = pt
	d.final = n < d.size
	return nil
}
