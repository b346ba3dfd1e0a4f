package table

import (
	"bytes"
	"context"
	"unicode/utf8"
)

// Result is the outcome of one ciphertext: Clear when Code is empty, otherwise the error code
// and a message that holds no clear byte.
type Result struct {
	Clear   []byte
	Code    string
	Message string
}

// Decrypter decrypts ciphertexts, handing each item's Result to each: once per item, in any
// order, from several goroutines at once if it likes; a Result's Clear need only be valid
// during the call (the run copies it out). Its error is for the batch as a whole (every server
// gone past the retry budget, a refused token): the run stops there, resumable; the failure of
// one ciphertext is in its Result.
type Decrypter interface {
	Decrypt(ctx context.Context, cts [][]byte, each func(i int, r Result)) error
}

// decrypt fills in b.out: each field's destination value, or its failure.
func (r *run) decrypt(ctx context.Context, b *batch) error {
	s := r.src
	// One slice for every row's fields, and room for every field's ciphertext (the batch's
	// recycled cells).
	c := b.cells
	c.flat = grow(c.flat, len(b.rows)*len(s.flds))
	flat := c.flat
	c.out = grow(c.out, len(b.rows))
	b.out = c.out
	c.cts, c.refs = grow(c.cts, len(flat))[:0], grow(c.refs, len(flat))[:0]
	cts, refs := c.cts, c.refs
	// The text ciphertexts were decoded as they were read (readBatch): a row holds the bytes
	// sent, unless a note says the text did not decode or decoded to no byte.
	for i, row := range b.rows {
		b.out[i] = flat[i*len(s.flds) : (i+1)*len(s.flds) : (i+1)*len(s.flds)]
		for j, ci := range s.flds {
			v, o := row[ci], &b.out[i][j]
			msg, noted := b.notes[i*len(row)+ci]
			switch {
			case noted && msg != "":
				o.code, o.msg = CodeInvalidEncoding, msg
				b.counts.failed++
				continue
			case v == nil:
				b.counts.empty++
				continue
			case len(v) == 0 && !noted:
				o.val = v
				b.counts.empty++
				continue
			}
			cts, refs = append(cts, v), append(refs, o)
		}
	}
	if len(cts) > 0 {
		// Each clear value goes where its ciphertext was, in the batch's buffers (the
		// ciphertext, sent already, is not needed again; a clear value is shorter).
		err := r.opts.Decrypter.Decrypt(ctx, cts, func(i int, res Result) {
			if res.Code == "" {
				res.Clear = keep(cts[i], res.Clear)
			}
			r.finish(refs[i], res)
		})
		if err != nil {
			return err
		}
	}
	for _, o := range refs {
		if o.code != "" {
			b.counts.failed++
		} else if o.val != nil {
			b.counts.decrypted++
		}
	}
	b.counts.rows = int64(len(b.rows))
	return nil
}

// keep copies clear over ct when it fits (it always does from an exit server), and returns the
// copy.
func keep(ct, clear []byte) []byte {
	if len(clear) > len(ct) {
		return bytes.Clone(clear)
	}
	return ct[:copy(ct, clear):len(clear)]
}

// finish sets o from a ciphertext's result: its clear value as the destination holds it
// (sealed, checked as text), or its failure.
func (r *run) finish(o *fieldOut, res Result) {
	if res.Code != "" {
		o.code, o.msg = res.Code, res.Message
		return
	}
	clear := res.Clear
	if r.opts.Seal != nil {
		sealed, err := r.opts.Seal(clear)
		if err != nil {
			o.code, o.msg = CodeSealFailed, err.Error()
			return
		}
		clear = sealed
	}
	if r.opts.ClearText && (!utf8.Valid(clear) || bytes.IndexByte(clear, 0) >= 0) {
		o.code, o.msg = CodeNotText, "the clear bytes are not UTF-8 text without NUL: use --clear-type bytea"
		return
	}
	if clear == nil {
		clear = []byte{}
	}
	o.val = clear
}
