package encryption

import (
	"bytes"
	"fmt"
	"io"
)

// Encrypt encrypts clear in format v (2 to 11). key is the resource key
// for formats 2 to 8 and the session key for formats 9 to 11 (the data key
// is then derived with a fresh random seed). It returns the encrypted
// buffer and its resource ID.
func Encrypt(v Version, key, clear []byte, opts EncryptOptions) ([]byte, ResourceID, error) {
	p, err := opts.params(v)
	if err != nil {
		return nil, ResourceID{}, fmt.Errorf("encrypt: %w", err)
	}
	if !v.IsStream() {
		out, rid, err := encryptSimple(v, key, clear, p)
		if err != nil {
			return nil, rid, fmt.Errorf("encrypt %s: %w", v, err)
		}
		return out, rid, nil
	}
	size, err := EncryptedSize(v, uint64(len(clear)), opts)
	if err != nil {
		return nil, ResourceID{}, err
	}
	var buf bytes.Buffer
	buf.Grow(int(size))
	w, err := newEncryptWriter(&buf, v, key, p)
	if err != nil {
		return nil, ResourceID{}, fmt.Errorf("encrypt %s: %w", v, err)
	}
	if _, err := w.Write(clear); err != nil {
		return nil, ResourceID{}, err
	}
	if err := w.Close(); err != nil {
		return nil, ResourceID{}, err
	}
	return buf.Bytes(), w.ResourceID(), nil
}

// NewEncryptWriter returns a writer that encrypts a stream format (4, 8 or
// 11) into w. key is the resource key (4, 8) or the session key (11). The
// caller must Close it to write the end of the stream.
func NewEncryptWriter(w io.Writer, v Version, key []byte, opts EncryptOptions) (*EncryptWriter, error) {
	if !v.IsStream() {
		return nil, fmt.Errorf("new encrypt writer: %w: %s is not a stream format", ErrInvalidArgument, v)
	}
	p, err := opts.params(v)
	if err != nil {
		return nil, fmt.Errorf("new encrypt writer: %w", err)
	}
	ew, err := newEncryptWriter(w, v, key, p)
	if err != nil {
		return nil, fmt.Errorf("new encrypt writer: %w", err)
	}
	return ew, nil
}

// EncryptedSize returns the size Encrypt produces for clearSize bytes in
// format v with opts (exit/FORMATS.md).
func EncryptedSize(v Version, clearSize uint64, opts EncryptOptions) (uint64, error) {
	if !v.Supported() {
		return 0, fmt.Errorf("encrypted size: %w: version %d", ErrUnknownFormat, uint8(v))
	}
	size := uint64(opts.ChunkSize)
	if size == 0 {
		size = DefaultChunkSize
	}
	if v.IsStream() && size < uint64(minChunkSize(v)) {
		return 0, fmt.Errorf("encrypted size: %w: chunk size %d below minimum %d", ErrInvalidArgument, size, minChunkSize(v))
	}
	padded := PaddedFromClearSize(clearSize, opts.Padding)
	switch v {
	case V4:
		c := size - v48Header - tagSize
		return clearSize + (clearSize/c+1)*(v48Header+tagSize), nil
	case V8:
		c := size - v48Header - tagSize - 1
		p := padded - 1
		return p + (p/c+1)*(v48Header+tagSize+1), nil
	case V11:
		c := size - v11Chunk
		p := padded - 1
		return v11Header + p/c*size + p%c + v11Chunk, nil
	case V6, V7, V10:
		return padded + uint64(simpleOverhead(v)), nil
	default:
		return clearSize + uint64(simpleOverhead(v)), nil
	}
}

// Decrypt extracts the resource ID of data, resolves its key with keys
// (ResolveKey: for formats 9 to 11 the session ID first, then the seed),
// and decrypts it. It returns the clear text and the resource ID.
func Decrypt(keys KeyFinder, data []byte, opts ...Option) ([]byte, ResourceID, error) {
	return decrypt(keys, data, opts, false)
}

// DecryptInPlace is Decrypt without a buffer of its own for the simple
// formats: it opens data in data's own bytes, and the clear text it returns
// is a part of data. Afterwards data holds clear bytes, or bytes of neither
// the ciphertext nor the clear text when decryption failed: the caller
// clears it once done. Stream formats are decrypted into a new buffer, as
// Decrypt does.
func DecryptInPlace(keys KeyFinder, data []byte) ([]byte, ResourceID, error) {
	return decrypt(keys, data, nil, true)
}

// decrypt is Decrypt, in data's own bytes for the simple formats when inPlace. A session's
// subkey is derived on the stack and cleared once used.
func decrypt(keys KeyFinder, data []byte, opts []Option, inPlace bool) ([]byte, ResourceID, error) {
	v, rid, err := ExtractResourceID(data)
	if err != nil {
		return nil, rid, fmt.Errorf("decrypt: %w", err)
	}
	var sub [KeySize]byte // a session's subkey, on the stack
	key, err := resolveKey(rid, keys, &sub)
	if err != nil {
		return nil, rid, fmt.Errorf("decrypt %s: %w", v, err)
	}
	out, err := decryptWithDataKey(key, data, opts, inPlace)
	clear(sub[:])
	return out, rid, err
}

// AppendDecrypt is Decrypt that appends the clear bytes to dst and returns the extended slice
// (dst's length unchanged on an error). A simple format is opened into dst's spare capacity,
// with no allocation of the data's size when that capacity suffices: for callers that decrypt
// many small values into one buffer (the exit server's decrypt-batch). Bytes of dst past its
// length may be overwritten on an error.
func AppendDecrypt(dst []byte, keys KeyFinder, data []byte, opts ...Option) ([]byte, ResourceID, error) {
	v, rid, err := ExtractResourceID(data)
	if err != nil {
		return dst, rid, fmt.Errorf("decrypt: %w", err)
	}
	if v.IsStream() {
		out, rid, err := Decrypt(keys, data, opts...)
		if err != nil {
			return dst, rid, err
		}
		return append(dst, out...), rid, nil
	}
	var sub [KeySize]byte // a session's subkey, on the stack
	key, err := resolveKey(rid, keys, &sub)
	if err != nil {
		return dst, rid, fmt.Errorf("decrypt %s: %w", v, err)
	}
	out, err := appendDecryptSimple(dst, v, key, data)
	clear(sub[:])
	if err != nil {
		return dst, rid, fmt.Errorf("decrypt %s: %w", v, err)
	}
	return out, rid, nil
}

// DecryptWithKey decrypts data with the same key Encrypt takes: the
// resource key for formats 1 to 8, the session key for formats 9 to 11
// (the data key H_32(sessionKey || seed) is derived from the seed in
// data). A key published under the seed of a transparent-session resource
// is already a data key: give it to Decrypt or NewDecryptReader through a
// KeyFinder (for example KeyMap{seed: key}), which try the session ID
// first and the seed second.
func DecryptWithKey(key, data []byte, opts ...Option) ([]byte, error) {
	if len(data) > 0 && Version(data[0]).IsTransparentSession() {
		v, rid, err := ExtractResourceID(data)
		if err != nil {
			return nil, fmt.Errorf("decrypt: %w", err)
		}
		sub, err := DeriveSubkey(key, rid.Seed)
		if err != nil {
			return nil, fmt.Errorf("decrypt %s: %w", v, err)
		}
		key = sub
	}
	return decryptWithDataKey(key, data, opts, false)
}

// decryptWithDataKey decrypts data with the AEAD key itself (the derived
// subkey for formats 9 to 11).
func decryptWithDataKey(key, data []byte, opts []Option, inPlace bool) ([]byte, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("decrypt: %w: empty buffer", ErrUnknownFormat)
	}
	v := Version(data[0])
	if !v.Supported() {
		return nil, fmt.Errorf("decrypt: %w: version %d", ErrUnknownFormat, data[0])
	}
	if !v.IsStream() {
		out, err := decryptSimple(v, key, data, inPlace)
		if err != nil {
			return nil, fmt.Errorf("decrypt %s: %w", v, err)
		}
		return out, nil
	}
	hs := headerSize(v)
	if len(data) < hs {
		return nil, fmt.Errorf("decrypt %s: %w: %d-byte header, need %d", v, ErrTruncated, len(data), hs)
	}
	d, err := newStreamDecrypter(bytes.NewReader(data[hs:]), v, data[:hs], key, newDecryptConfig(opts))
	if err != nil {
		return nil, fmt.Errorf("decrypt %s: %w", v, err)
	}
	out := bytes.NewBuffer(make([]byte, 0, len(data)))
	if _, err := d.WriteTo(out); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// DecryptReader decrypts any format from an io.Reader. Stream formats are
// decrypted one chunk at a time (memory bounded by one chunk); simple
// formats are read whole, up to Limits.MaxSimpleSize.
type DecryptReader struct {
	v   Version
	rid ResourceID
	r   io.Reader
}

// NewDecryptReader reads the header of r, resolves the key with keys and
// returns a reader of the clear text. A truncated, reordered or tampered
// stream makes Read fail; it never ends early with io.EOF.
func NewDecryptReader(r io.Reader, keys KeyFinder, opts ...Option) (*DecryptReader, error) {
	cfg := newDecryptConfig(opts)
	var first [1]byte
	if _, err := io.ReadFull(r, first[:]); err != nil {
		if err == io.EOF {
			return nil, fmt.Errorf("new decrypt reader: %w: empty input", ErrUnknownFormat)
		}
		return nil, fmt.Errorf("new decrypt reader: read version: %w", err)
	}
	v := Version(first[0])
	if !v.Supported() {
		return nil, fmt.Errorf("new decrypt reader: %w: version %d", ErrUnknownFormat, first[0])
	}
	if !v.IsStream() {
		return newSimpleReader(v, first[0], r, keys, cfg)
	}
	header := make([]byte, headerSize(v))
	header[0] = first[0]
	if n, err := io.ReadFull(r, header[1:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, fmt.Errorf("new decrypt reader %s: %w: %d-byte header", v, ErrTruncated, n+1)
		}
		return nil, fmt.Errorf("new decrypt reader %s: read header: %w", v, err)
	}
	_, rid, err := ExtractResourceID(header)
	if err != nil {
		return nil, fmt.Errorf("new decrypt reader: %w", err)
	}
	// Reject a bad chunk size before asking for the key.
	if _, err := streamChunkSize(v, header, cfg.limits); err != nil {
		return nil, fmt.Errorf("new decrypt reader %s: %w", v, err)
	}
	key, err := ResolveKey(rid, keys)
	if err != nil {
		return nil, fmt.Errorf("new decrypt reader %s: %w", v, err)
	}
	d, err := newStreamDecrypter(r, v, header, key, cfg)
	if err != nil {
		return nil, fmt.Errorf("new decrypt reader %s: %w", v, err)
	}
	return &DecryptReader{v: v, rid: rid, r: d}, nil
}

func newSimpleReader(v Version, first byte, r io.Reader, keys KeyFinder, cfg decryptConfig) (*DecryptReader, error) {
	limit := cfg.limits.MaxSimpleSize
	data, err := io.ReadAll(io.LimitReader(io.MultiReader(bytes.NewReader([]byte{first}), r), limit+1))
	if err != nil {
		return nil, fmt.Errorf("new decrypt reader %s: read input: %w", v, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("new decrypt reader %s: %w: input above %d bytes", v, ErrLimitExceeded, limit)
	}
	out, rid, err := Decrypt(keys, data)
	if err != nil {
		return nil, fmt.Errorf("new decrypt reader: %w", err)
	}
	return &DecryptReader{v: v, rid: rid, r: bytes.NewReader(out)}, nil
}

// Version returns the format of the input.
func (d *DecryptReader) Version() Version { return d.v }

// ResourceID returns the resource ID read from the input.
func (d *DecryptReader) ResourceID() ResourceID { return d.rid }

// ChunkSize is the encrypted chunk size a stream format's header declared (0 for simple
// formats): the decrypter holds one buffer of it, three with WithReadAhead.
func (d *DecryptReader) ChunkSize() int {
	if sd, ok := d.r.(*streamDecrypter); ok {
		return sd.size
	}
	return 0
}

// Read implements io.Reader.
func (d *DecryptReader) Read(p []byte) (int, error) { return d.r.Read(p) }

// Close stops a stream's read-ahead (WithReadAhead) when the clear text is not read to its
// end, waiting for the reading goroutine to end, and gives its buffers back; reads then fail.
// It has nothing to do for a reader without read-ahead, or read to its end.
func (d *DecryptReader) Close() error {
	if sd, ok := d.r.(*streamDecrypter); ok {
		return sd.Close()
	}
	return nil
}

// WriteTo implements io.WriterTo without an intermediate copy.
func (d *DecryptReader) WriteTo(w io.Writer) (int64, error) {
	return d.r.(io.WriterTo).WriteTo(w)
}
