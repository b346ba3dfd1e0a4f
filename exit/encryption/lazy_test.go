package encryption

import (
	"bytes"
	"io"
)

// lazyStream is an io.Reader of a stream-format ciphertext of a repeating
// pattern, encrypted on demand so that arbitrarily large streams never sit
// in memory.
type lazyStream struct {
	w      *EncryptWriter
	out    bytes.Buffer
	piece  []byte
	left   int64
	closed bool
	err    error
}

func newLazyStream(v Version, key []byte, size int64, opts EncryptOptions) (*lazyStream, ResourceID, error) {
	l := &lazyStream{left: size, piece: bytes.Repeat([]byte("lazy stream pattern "), 1<<12)}
	w, err := NewEncryptWriter(&l.out, v, key, opts)
	if err != nil {
		return nil, ResourceID{}, err
	}
	l.w = w
	return l, w.ResourceID(), nil
}

func (l *lazyStream) Read(p []byte) (int, error) {
	for l.out.Len() == 0 {
		switch {
		case l.err != nil:
			return 0, l.err
		case l.closed:
			return 0, io.EOF
		case l.left == 0:
			l.err = l.w.Close()
			l.closed = true
		default:
			n := int(min(l.left, int64(len(l.piece))))
			_, l.err = l.w.Write(l.piece[:n])
			l.left -= int64(n)
		}
	}
	return l.out.Read(p)
}
