package exitclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// Record formats of DecryptRecords.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// UsageError is a problem with the command line or the shape of the input found before any
// record is written (a --field that is not a column of the CSV header).
type UsageError struct{ msg string }

func (e *UsageError) Error() string { return e.msg }

// ErrNoRecord reports an input that holds nothing (empty, or only blank lines; a CSV without
// even its header row), as exit import refuses a file that holds no identity: a wrong file, more
// likely than data to decrypt. Nothing is written to out. A CSV header alone is not this: it is
// an empty table, written back as it came.
var ErrNoRecord = errors.New("the input holds no record")

// RecordOptions tunes DecryptRecords.
type RecordOptions struct {
	// Format is FormatCSV (RFC 4180 with a header row) or FormatJSONL (one object per line).
	Format string
	// Fields are the CSV columns or top-level JSON keys holding ciphertexts.
	Fields []string
	// Encoding is the ciphertexts' text form: EncodingBase64 (default) or EncodingHex.
	Encoding string
	// ClearEncoding is the clear values' form: EncodingText (default), EncodingBase64 or
	// EncodingHex.
	ClearEncoding string
	// Jobs is the number of batches in flight at once (default 4).
	Jobs int
	// Seal, when set, turns each clear value into what is written instead (an age file, for
	// example) before ClearEncoding applies; the clear bytes stay in memory.
	Seal func(clear []byte) ([]byte, error)
	// Errors receives every failed field, in record order (default: dropped). An error it
	// returns stops the run.
	Errors func(FieldError) error
	// Progress, when set, is called with the records written so far, from time to time.
	Progress func(records int64)
	// Key, when set, names the CSV column or top-level JSON key whose value each FieldError
	// carries as Key (a primary key, to find the record by).
	Key string
}

// FieldError is one field that kept its ciphertext (or one record passed through unchanged
// because it could not be read, with Field empty and Code invalid_record). Record counts data
// records from 1 (a CSV header is not a record, nor is a blank line).
type FieldError struct {
	Record int `json:"record"`
	// Key is the value of RecordOptions.Key in the record: a JSON string's text, other JSON
	// values as written; absent when the record has none (or it is empty).
	Key     string `json:"key,omitempty"`
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// RecordsReport is the outcome of DecryptRecords.
type RecordsReport struct {
	Records   int64 // data records written
	Decrypted int64 // fields replaced by their clear value
	Empty     int64 // empty or null fields, passed through
	Failed    int64 // failed fields and unreadable records (each a FieldError)
}

// Codes of the failures found by the client itself (the others are the server's).
const (
	CodeInvalidRecord   = "invalid_record"   // the record is not well-formed: passed through whole
	CodeInvalidField    = "invalid_field"    // a JSON field that is not a string or null
	CodeInvalidEncoding = "invalid_encoding" // the ciphertext text is not base64 or hex
	CodeNotText         = "not_text"         // clear bytes that are not UTF-8 under --clear-encoding text
	CodeSealFailed      = "seal_failed"      // Seal refused the clear value
)

// record is one record of the input: its exact bytes and the fields to decrypt in it.
type record struct {
	num    int // data record number from 1; 0 for a blank line
	raw    []byte
	fields []field
	bad    string // why the record cannot be read (it passes through whole); such a record has no fields
	key    string // the value of the key column (RecordOptions.Key), when one is named
	inline [1]field
}

// arena hands out byte slices from shared chunks, so that the many small values of a batch
// (records, ciphertexts, clear values) cost a few allocations instead of one each. A slice
// stays valid as long as anything refers to its chunk, or until release.
type arena struct {
	chunk []byte
	used  [][]byte // the chunks handed out since the last detach or release
}

const arenaChunk = 64 << 10

// chunks recycles arena chunks: a run of decrypt-records writes about a gigabyte through
// arenas, and fresh chunks would each be zeroed and collected.
var chunks = sync.Pool{New: func() any { return new([arenaChunk]byte) }}

// alloc returns a slice of n bytes (zero length, capacity n) and keeps it in the arena.
func (a *arena) alloc(n int) []byte {
	if a == nil || n > arenaChunk/4 {
		return make([]byte, 0, n)
	}
	if cap(a.chunk)-len(a.chunk) < n {
		a.chunk = chunks.Get().(*[arenaChunk]byte)[:0]
		a.used = append(a.used, a.chunk)
	}
	s := a.chunk[len(a.chunk) : len(a.chunk) : len(a.chunk)+n]
	a.chunk = a.chunk[:len(a.chunk)+n]
	return s
}

// copy returns a copy of p from the arena.
func (a *arena) copy(p []byte) []byte { return append(a.alloc(len(p)), p...) }

// detach hands the chunks used so far to the caller (to release once nothing refers to
// them), and makes the arena start a new chunk.
func (a *arena) detach() [][]byte {
	used := a.used
	a.chunk, a.used = nil, nil
	return used
}

// releaseChunks gives chunks back for reuse: nothing may refer to them any more.
func releaseChunks(used [][]byte) {
	for _, c := range used {
		chunks.Put((*[arenaChunk]byte)(c[:arenaChunk]))
	}
}

// field is one value to decrypt: raw[start:end] is replaced by repl when it decrypts.
type field struct {
	name       string
	start, end int
	text       []byte // the ciphertext's text, unquoted
	null       bool   // empty or JSON null: passes through
	bad        string
	ct         []byte
	repl       []byte
	code, msg  string
}

type recordReader interface {
	preamble() []byte
	next() (*record, error)
	// setKey names the column or key whose value each record carries as its key; a CSV
	// column absent from the header is a usage error.
	setKey(name string) error
}

// recBatch is the records of one request, with their ciphertexts.
type recBatch struct {
	recs  []*record
	items [][]byte
	refs  []*field // refs[i] holds items[i]
	big   []*field // sent alone to POST /v1/decrypt
	bytes int
	mem   arena // ciphertexts (reader) then clear values (worker)
	// raw holds the chunks of the records' bytes (the reader's arena, detached at the
	// batch's end); the writer releases them, with mem's, once the batch is written.
	raw  [][]byte
	done chan struct{}
	err  error
}

// newRecordReader reads the records of format (csv or jsonl) from in, with the fields named;
// mem, when set, holds the records' bytes for a caller that keeps them. Without it a CSV
// reader reuses its record, which is valid only until the next one is read.
func newRecordReader(format string, in io.Reader, fields []string, mem *arena) (recordReader, error) {
	switch format {
	case FormatCSV:
		r, err := newCSVReader(in, fields)
		if err != nil {
			return nil, err
		}
		r.mem = mem
		return r, nil
	case FormatJSONL:
		r := newJSONLReader(in, fields)
		r.mem = mem
		return r, nil
	}
	return nil, &UsageError{fmt.Sprintf("unknown record format %q: want csv or jsonl", format)}
}

// DecryptRecords reads records from in, decrypts the named fields through the exit server
// (POST /v1/decrypt-batch, several batches in flight) and writes every record to out in input
// order, with the fields that decrypted replaced by their clear value and everything else
// byte for byte as it came. A field that does not decrypt keeps its ciphertext and is given
// to opts.Errors. Memory stays bounded by the batches in flight, whatever the input's size.
// The error is for the run as a whole: unreadable input, the server unreachable after the
// retries or refusing the token, ctx done, out failing; out then holds the first records, each
// whole (the CSV header first), and the caller ends it (StopWriter.Stop for a stream). An input
// without a data record is ErrNoRecord, and out is left untouched, except a CSV header alone: that
// is an empty table (psql's \copy of one), so its header is written and the run succeeds.
func (c *Client) DecryptRecords(ctx context.Context, in io.Reader, out io.Writer, opts RecordOptions) (RecordsReport, error) {
	var rep RecordsReport
	if _, err := DecodeCiphertext(opts.Encoding, nil); err != nil {
		return rep, &UsageError{err.Error()}
	}
	if _, err := EncodeClear(nil, opts.ClearEncoding, nil); err != nil {
		return rep, &UsageError{err.Error()}
	}
	rawMem := &arena{}
	rr, err := newRecordReader(opts.Format, in, opts.Fields, rawMem)
	if err != nil {
		return rep, err
	}
	if opts.Key != "" {
		if err := rr.setKey(opts.Key); err != nil {
			return rep, err
		}
	}
	quote := quoteCSV
	if opts.Format == FormatJSONL {
		quote = quoteJSON
	}
	jobs := opts.Jobs
	if jobs <= 0 {
		jobs = 4
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending := make(chan *recBatch, jobs)
	work := make(chan *recBatch)
	var readErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // reader: records into batches
		defer wg.Done()
		defer close(work)
		defer close(pending)
		send := func(b *recBatch) bool {
			select {
			case pending <- b:
			case <-ctx.Done():
				return false
			}
			select {
			case work <- b:
				return true
			case <-ctx.Done():
				return false
			}
		}
		b := &recBatch{done: make(chan struct{})}
		for {
			rec, err := rr.next()
			if err == io.EOF {
				break
			}
			if err != nil {
				readErr = err
				return
			}
			b.add(rec, opts.Encoding)
			if len(b.items) >= batchItems || b.bytes >= batchBytes || len(b.recs) >= 4*batchItems || len(b.big) >= 4 {
				b.raw = rawMem.detach()
				if !send(b) {
					return
				}
				b = &recBatch{done: make(chan struct{})}
			}
		}
		if len(b.recs) > 0 {
			b.raw = rawMem.detach()
			send(b)
		}
	}()
	for range jobs {
		wg.Add(1)
		go func() { // workers: one request per batch
			defer wg.Done()
			for b := range work {
				c.runBatch(ctx, b, opts, quote)
				close(b.done)
			}
		}()
	}
	abort := func(err error) (RecordsReport, error) {
		cancel()
		for range pending {
		}
		wg.Wait()
		return rep, err
	}

	// Records go out in writes that each end on a record boundary (never bufio's cut at its
	// buffer's size), and what is held when the run stops is dropped: standard output stopped at
	// any point ends on a whole record, and StopWriter's line after it is the one a loader fails
	// on (a cut record would be printed by the loader's error, its clear values with it).
	// The CSV header goes out at once: a stop line in its place would be skipped as the header
	// by a loader told there is one (psql's HEADER), which would then load nothing and succeed.
	ow := recordOut{w: out, buf: make([]byte, 0, outChunk+outChunk/4)}
	ow.buf = append(ow.buf, rr.preamble()...)
	if err := ow.flush(); err != nil {
		return abort(err)
	}
	for b := range pending {
		select {
		case <-b.done:
		case <-ctx.Done():
			return abort(ctx.Err())
		}
		if b.err != nil {
			return abort(fmt.Errorf("decrypt records: %w", b.err))
		}
		for _, rec := range b.recs {
			if rec.num > 0 {
				rep.Records++
			}
			if rec.bad != "" {
				rep.Failed++
				if err := report(opts, FieldError{rec.num, rec.key, "", CodeInvalidRecord, rec.bad}); err != nil {
					return abort(err)
				}
			}
			prev := 0
			for i := range rec.fields {
				f := &rec.fields[i]
				switch {
				case f.repl != nil:
					rep.Decrypted++
					ow.buf = append(ow.buf, rec.raw[prev:f.start]...)
					ow.buf = append(ow.buf, f.repl...)
					prev = f.end
				case f.code != "":
					rep.Failed++
					if err := report(opts, FieldError{rec.num, rec.key, f.name, f.code, f.msg}); err != nil {
						return abort(err)
					}
				default:
					rep.Empty++
				}
			}
			ow.buf = append(ow.buf, rec.raw[prev:]...)
			if len(ow.buf) >= outChunk {
				if err := ow.flush(); err != nil {
					return abort(err)
				}
			}
		}
		b.release()
		if opts.Progress != nil {
			opts.Progress(rep.Records)
		}
	}
	wg.Wait()
	if readErr != nil {
		return rep, readErr
	}
	if err := ctx.Err(); err != nil {
		return rep, err
	}
	if rep.Records == 0 && opts.Format != FormatCSV {
		return rep, ErrNoRecord // what ow holds (blank lines) is never written
	}
	if err := ow.flush(); err != nil {
		return rep, err
	}
	return rep, nil
}

// outChunk is the size from which recordOut writes what it holds.
const outChunk = 256 << 10

// recordOut holds whole records until outChunk bytes are there, then writes them in one Write.
type recordOut struct {
	w   io.Writer
	buf []byte
}

func (o *recordOut) flush() error {
	if len(o.buf) == 0 {
		return nil
	}
	_, err := o.w.Write(o.buf)
	o.buf = o.buf[:0]
	if err != nil {
		return fmt.Errorf("write records: %w", err)
	}
	return nil
}

func report(opts RecordOptions, fe FieldError) error {
	if opts.Errors == nil {
		return nil
	}
	if err := opts.Errors(fe); err != nil {
		return fmt.Errorf("write errors: %w", err)
	}
	return nil
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
		if len(ct) >= bigValue {
			b.big = append(b.big, f)
			continue
		}
		b.items = append(b.items, ct)
		b.refs = append(b.refs, f)
		b.bytes += len(ct) + 5
	}
}

// runBatch decrypts a batch's ciphertexts and fills in each field's replacement or error.
func (c *Client) runBatch(ctx context.Context, b *recBatch, opts RecordOptions, quote func(dst, v []byte) []byte) {
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
		r, err := c.decryptOne(ctx, f.ct)
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
func (f *field) finish(mem *arena, r BatchResult, opts RecordOptions, quote func(dst, v []byte) []byte) {
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
