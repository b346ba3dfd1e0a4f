package encryption

import (
	"bytes"
	"crypto/cipher"
	"encoding/binary"
	"fmt"
	"io"
)

// streamDecrypter decrypts formats 4, 8 and 11 chunk by chunk with a single
// chunk buffer. It releases a chunk's plaintext only after its tag
// verified, and reports a stream that ends without its short final chunk
// as truncated.
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
	interrupt   func()       // WithReadAhead: chunks are read ahead in a goroutine
	pipe        *pipeline    // the read-ahead, once started
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
func newStreamDecrypter(src io.Reader, v Version, header, key []byte, cfg decryptConfig) (*streamDecrypter, error) {
	size, err := streamChunkSize(v, header, cfg.limits)
	if err != nil {
		return nil, err
	}
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	d := &streamDecrypter{
		src:       src,
		v:         v,
		aead:      aead,
		size:      size,
		ivs:       newIVDeriver(),
		header:    append([]byte(nil), header...),
		interrupt: cfg.interrupt,
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
		if d.readingAhead() {
			d.err = d.nextAhead()
		} else {
			d.err = d.next()
		}
	}
	n := copy(p, d.out)
	d.out = d.out[n:]
	return n, nil
}

// WriteTo implements io.WriterTo. When the source is itself an
// io.WriterTo (bytes.Reader, bytes.Buffer, bufio.Reader...), complete
// chunks handed over by the source are decrypted straight out of its
// buffer, saving a copy.
func (d *streamDecrypter) WriteTo(w io.Writer) (int64, error) {
	if d.readingAhead() && d.err == nil {
		return d.writeToReadAhead(w)
	}
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
		if wt, ok := d.src.(io.WriterTo); ok && !d.final {
			n, err := d.push(wt, w)
			total += n
			d.err = err
			continue
		}
		d.err = d.next()
	}
}

// next reads and decrypts one chunk into d.out, or returns io.EOF after
// the final chunk.
func (d *streamDecrypter) next() error {
	if d.final {
		return io.EOF
	}
	d.grow(0, 0)
	off := 0
	if d.index == 0 && d.v != V11 {
		off = copy(d.buf, d.header)
	}
	var n int
	var err error
	d.buf, n, err = fillChunk(d.src, d.buf, off, d.size, plainSteps)
	pt, err := d.decryptRead(d.buf, n, err)
	if err != nil {
		return err
	}
	d.out = pt
	return nil
}

// decryptRead decrypts in place the chunk of n bytes read into buf, for
// next and the read-ahead; readErr is the read's failure, and no byte where
// a chunk should start is a stream without its final chunk.
func (d *streamDecrypter) decryptRead(buf []byte, n int, readErr error) ([]byte, error) {
	switch {
	case readErr != nil:
		return nil, fmt.Errorf("decrypt %s chunk %d: %w", d.v, d.index, readErr)
	case n == 0:
		return nil, d.missingFinal()
	}
	return d.decryptChunk(buf[:n], true)
}

// missingFinal reports a source that ended where a chunk should start:
// right after the header (too short for the format) or after a full chunk
// (a cut stream).
func (d *streamDecrypter) missingFinal() error {
	if d.index == 0 {
		return fmt.Errorf("decrypt %s: %w: no chunk after the header", d.v, ErrTruncated)
	}
	return fmt.Errorf("decrypt %s chunk %d: %w", d.v, d.index, ErrIncompleteStream)
}

// shortChunk reports a final chunk too short to hold the chunk overhead:
// the input is truncated when it is the first chunk, the stream was cut
// otherwise.
func (d *streamDecrypter) shortChunk(n int) error {
	if d.index == 0 {
		return fmt.Errorf("%w: %d-byte first chunk", ErrTruncated, n)
	}
	return fmt.Errorf("%w: %d-byte final chunk", ErrIncompleteStream, n)
}

// grow makes the chunk buffer hold at least need bytes (at most the
// declared chunk size) by the rule plainSteps, keeping its first keep bytes.
func (d *streamDecrypter) grow(need, keep int) {
	d.buf = plainSteps.grow(d.buf, need, keep, d.size)
}

// push drives the source through its WriteTo method and decrypts chunks as
// they are handed over. It returns io.EOF after the final chunk.
func (d *streamDecrypter) push(src io.WriterTo, w io.Writer) (int64, error) {
	s := &chunkSink{d: d, w: w}
	if d.index == 0 && d.v != V11 {
		d.grow(v48Header, 0)
		s.n = copy(d.buf, d.header)
	}
	if _, err := src.WriteTo(s); err != nil {
		if s.failed != nil {
			return s.written, s.failed
		}
		return s.written, fmt.Errorf("decrypt %s chunk %d: read encrypted stream: %w", d.v, d.index, err)
	}
	// The source ended: what is buffered is the short final chunk.
	if s.n == 0 {
		return s.written, d.missingFinal()
	}
	pt, err := d.decryptChunk(d.buf[:s.n], true)
	if err != nil {
		return s.written, err
	}
	n, err := w.Write(pt)
	s.written += int64(n)
	if err != nil {
		return s.written, err
	}
	return s.written, io.EOF
}

// chunkSink is the io.Writer a source pushes encrypted bytes into.
type chunkSink struct {
	d       *streamDecrypter
	w       io.Writer
	n       int // bytes of a partial chunk held in d.buf
	written int64
	failed  error // decryption or output error, reported as is
}

func (s *chunkSink) Write(p []byte) (int, error) {
	d := s.d
	consumed := 0
	for len(p) > 0 {
		var pt []byte
		var err error
		if s.n == 0 && len(p) >= d.size {
			// A whole chunk in the source's buffer: decrypt it from there
			// into the chunk buffer.
			d.grow(d.size, 0)
			pt, err = d.decryptChunk(p[:d.size], false)
			p = p[d.size:]
			consumed += d.size
		} else {
			d.grow(min(d.size, s.n+len(p)), s.n)
			c := copy(d.buf[s.n:min(d.size, len(d.buf))], p)
			s.n += c
			p = p[c:]
			consumed += c
			if s.n < d.size {
				continue
			}
			s.n = 0
			pt, err = d.decryptChunk(d.buf[:d.size], true)
		}
		if err == nil {
			var n int
			n, err = s.w.Write(pt)
			s.written += int64(n)
		}
		if err != nil {
			s.failed = err
			return consumed, err
		}
	}
	return consumed, nil
}

// decryptChunk authenticates and decrypts one whole encrypted chunk (for
// formats 4 and 8 including its header). In place, the plaintext
// overwrites in; otherwise it goes to d.buf. A chunk shorter than the
// declared size is the final one.
func (d *streamDecrypter) decryptChunk(in []byte, inPlace bool) ([]byte, error) {
	var pt []byte
	var err error
	if d.v == V11 {
		pt, err = d.decryptV11(in, inPlace)
	} else {
		pt, err = d.decryptV4V8(in, inPlace)
	}
	if err != nil {
		return nil, fmt.Errorf("decrypt %s chunk %d: %w", d.v, d.index, err)
	}
	d.final = len(in) < d.size
	d.index++
	return pt, nil
}

func (d *streamDecrypter) decryptV11(in []byte, inPlace bool) ([]byte, error) {
	if len(in) < v11Chunk {
		return nil, d.shortChunk(len(in))
	}
	dst := d.buf[:0]
	if inPlace {
		dst = in[:0]
	}
	iv := d.ivs.derive(d.seed[:], d.index)
	pt, err := d.aead.Open(dst, iv, in, d.header)
	if err != nil {
		return nil, ErrDecryptionFailed
	}
	padLen := uint64(binary.LittleEndian.Uint32(pt))
	if padLen > uint64(len(pt)-4) {
		return nil, fmt.Errorf("%w: invalid padding size value", ErrBadPadding)
	}
	data := pt[4+padLen:]
	if d.onlyPadding && len(data) > 0 {
		return nil, fmt.Errorf("%w: data after padding", ErrBadPadding)
	}
	if padLen > 0 {
		d.onlyPadding = true
	}
	return data, nil
}

func (d *streamDecrypter) decryptV4V8(in []byte, inPlace bool) ([]byte, error) {
	if len(in) < v48Header+tagSize {
		return nil, d.shortChunk(len(in))
	}
	hdr := in[:v48Header]
	if d.index > 0 {
		// Version, chunk size and resource ID must repeat; the IV seed
		// (last 24 bytes) is fresh per chunk.
		if !bytes.Equal(hdr[:v48Header-ivSize], d.header[:v48Header-ivSize]) {
			return nil, fmt.Errorf("%w: version/resourceId/encryptedChunkSize mismatch in headers", ErrDecryptionFailed)
		}
	}
	var ad []byte
	if d.v == V8 {
		ad = hdr
	}
	dst := d.buf[:0]
	if inPlace {
		dst = in[v48Header:v48Header]
	}
	iv := d.ivs.derive(hdr[v48Header-ivSize:], d.index)
	pt, err := d.aead.Open(dst, iv, in[v48Header:], ad)
	if err != nil {
		return nil, ErrDecryptionFailed
	}
	if d.v == V4 {
		return pt, nil
	}
	data, err := unpad(pt)
	if err != nil {
		return nil, err
	}
	if d.onlyPadding && len(data) > 0 {
		return nil, fmt.Errorf("%w: data after padding", ErrBadPadding)
	}
	if len(data) < len(pt)-1 {
		d.onlyPadding = true
	}
	return data, nil
}
