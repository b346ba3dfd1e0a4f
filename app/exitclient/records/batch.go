package records

import (
	"context"
	"errors"
	"unicode/utf8"

	"github.com/idvault/idvault/app/exitclient"
)

// recBatch is the records of one request, with their ciphertexts.
type recBatch struct {
	recs  []*record
	items [][]byte
	refs  []*field // refs[i] holds items[i]
	big   []*field // sent alone to POST /v1/decrypt (exitclient.BigValue and over)
	bytes int
	mem   arena // ciphertexts (reader) then clear values (worker)
	// raw holds the chunks of the records' bytes (the reader's arena, detached at the
	// batch's end); the writer releases them, with mem's, once the batch is written.
	raw  [][]byte
	done chan struct{}
	err  error
}

func newRecBatch() *recBatch { return &recBatch{done: make(chan struct{})} }

// full reports whether b is as large as a request should be (or holds enough big values,
// each a request of its own).
func (b *recBatch) full() bool {
	return len(b.items) >= exitclient.BatchItems || b.bytes >= exitclient.BatchBytes ||
		len(b.recs) >= 4*exitclient.BatchItems || len(b.big) >= 4
}

// release gives the batch's arena chunks back once it is written: its records, ciphertexts and
// clear values are gone with them.
func (b *recBatch) release() {
	releaseChunks(b.raw)
	releaseChunks(b.mem.detach())
	b.recs, b.items, b.refs, b.big, b.raw = nil, nil, nil, nil, nil
}

// add puts rec in the batch with the ciphertexts of its fields; a field whose text does not
// decode gets its error at once.
func (b *recBatch) add(rec *record, encoding string) {
	b.recs = append(b.recs, rec)
	if rec.bad != "" {
		return
	}
	for i := range rec.fields {
		f := &rec.fields[i]
		switch {
		case f.bad != "":
			f.code, f.msg = CodeInvalidField, f.bad
			continue
		case f.null:
			continue
		}
		ct, err := decodeCiphertextTo(&b.mem, encoding, f.text)
		if err != nil {
			f.code, f.msg = CodeInvalidEncoding, err.Error()
			continue
		}
		f.ct = ct
		if len(ct) >= exitclient.BigValue {
			b.big = append(b.big, f)
			continue
		}
		b.items = append(b.items, ct)
		b.refs = append(b.refs, f)
		b.bytes += len(ct) + 5
	}
}

// send decrypts a batch's ciphertexts through c and fills in each field's replacement or
// error (b.err: the run's error).
func (b *recBatch) send(ctx context.Context, c *exitclient.Client, opts Options, quote func(dst, v []byte) []byte) {
	if len(b.items) > 0 {
		res, err := c.DecryptBatch(ctx, b.items)
		if err != nil {
			b.err = err
			return
		}
		for i, r := range res {
			b.refs[i].finish(&b.mem, r, opts, quote)
		}
	}
	for _, f := range b.big {
		r, err := c.DecryptOne(ctx, f.ct)
		if err != nil {
			b.err = err
			return
		}
		f.finish(&b.mem, r, opts, quote)
	}
	for _, rec := range b.recs {
		for i := range rec.fields {
			rec.fields[i].ct, rec.fields[i].text = nil, nil
		}
	}
}

// finish sets the field's replacement from its clear value, or its error.
func (f *field) finish(mem *arena, r exitclient.BatchResult, opts Options, quote func(dst, v []byte) []byte) {
	if r.Code != "" {
		f.code, f.msg = r.Code, r.Message
		return
	}
	clear := r.Clear
	if opts.Seal != nil {
		sealed, err := opts.Seal(clear)
		if err != nil {
			f.code, f.msg = CodeSealFailed, err.Error()
			return
		}
		clear = sealed
	}
	v := clear
	if opts.ClearEncoding != EncodingText && opts.ClearEncoding != "" || !utf8.Valid(clear) {
		var err error
		if v, err = EncodeClear(mem.alloc(2*len(clear)+4), opts.ClearEncoding, clear); err != nil {
			if errors.Is(err, errNotText) {
				f.code, f.msg = CodeNotText, err.Error()
			} else {
				f.code, f.msg = CodeInvalidEncoding, err.Error()
			}
			return
		}
	}
	f.repl = quote(mem.alloc(len(v)+len(v)/8+2), v)
}
