package block

import "fmt"

// reader consumes a byte slice field by field; the first error sticks and
// later reads return zero values. Nothing is allocated from a length field
// before checking that the bytes are there.
type reader struct {
	b   []byte
	err error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) take(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n > len(r.b) {
		r.fail(fmt.Errorf("%w: need %d bytes, %d left", ErrTruncated, n, len(r.b)))
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *reader) fixed(dst []byte) { copy(dst, r.take(len(dst))) }

func (r *reader) varint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n, err := ReadVarint(r.b)
	if err != nil {
		r.fail(err)
		return 0
	}
	r.b = r.b[n:]
	return v
}

// count reads a list length and checks that that many elements of at
// least elemSize bytes can follow.
func (r *reader) count(elemSize int) int {
	n := r.varint()
	if r.err != nil {
		return 0
	}
	if n > uint64(len(r.b)/elemSize) {
		r.fail(fmt.Errorf("%w: list of %d elements of %d bytes, %d bytes left", ErrTruncated, n, elemSize, len(r.b)))
		return 0
	}
	return int(n)
}

func (r *reader) flag() bool {
	b := r.take(1)
	if r.err != nil {
		return false
	}
	if b[0] > 1 {
		r.fail(fmt.Errorf("%w: flag byte %d", ErrMalformed, b[0]))
	}
	return b[0] == 1
}

func (r *reader) done() error {
	if r.err != nil {
		return r.err
	}
	if len(r.b) != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(r.b))
	}
	return nil
}
