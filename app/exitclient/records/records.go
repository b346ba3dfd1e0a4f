// Package records decrypts the ciphertext fields of a file of records (`idvault exit
// decrypt-records`: CSV or JSON lines) through the exit server, writing every record back byte
// for byte but for the fields replaced: the readers and writers of both formats, the text forms
// of ciphertexts and clear values (codec.go), the pipeline of a run (pipeline.go) and the stop
// line of a stream cut short (StopWriter). The audit reads records through Reader.
package records

import (
	"errors"
	"fmt"
	"io"
)

// Record formats of Decrypt.
const (
	FormatCSV   = "csv"
	FormatJSONL = "jsonl"
)

// UsageError is a problem with the command line or the shape of the input found before any
// record is written (a --field that is not a column of the CSV header).
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// ErrNoRecord reports an input that holds nothing (empty, or only blank lines; a CSV without
// even its header row), as exit import refuses a file that holds no identity: a wrong file, more
// likely than data to decrypt. Nothing is written to out. A CSV header alone is not this: it is
// an empty table, written back as it came.
var ErrNoRecord = errors.New("the input holds no record")

// Options tunes Decrypt.
type Options struct {
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
	// Key is the value of Options.Key in the record: a JSON string's text, other JSON
	// values as written; absent when the record has none (or it is empty).
	Key     string `json:"key,omitempty"`
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Report is the outcome of Decrypt.
type Report struct {
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
	key    string // the value of the key column (Options.Key), when one is named
	inline [1]field
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
	return nil, &UsageError{Msg: fmt.Sprintf("unknown record format %q: want csv or jsonl", format)}
}

// Reader reads records one at a time, for a caller that keeps nothing of a record past the
// next one (the audit): a record and its fields are valid until the next call of Next.
type Reader struct{ rr recordReader }

// NewReader reads the records of format (FormatCSV or FormatJSONL) from in, with the fields
// named; key, when set, names the column or top-level key whose value each record carries
// (Record.Key). A CSV field or key absent from the header is a *UsageError.
func NewReader(format string, in io.Reader, fields []string, key string) (*Reader, error) {
	rr, err := newRecordReader(format, in, fields, nil)
	if err != nil {
		return nil, err
	}
	if key != "" {
		if err := rr.setKey(key); err != nil {
			return nil, err
		}
	}
	return &Reader{rr: rr}, nil
}

// Next returns the next record, a blank line being a record numbered 0; io.EOF at the end.
func (r *Reader) Next() (Record, error) {
	rec, err := r.rr.next()
	return Record{rec}, err
}

// Record is one record read by a Reader.
type Record struct{ r *record }

// Num is the record's number, counting data records from 1 (0 for a blank line).
func (r Record) Num() int { return r.r.num }

// Key is the value of the key column or key (NewReader), empty when the record has none.
func (r Record) Key() string { return r.r.key }

// Bad says why the record cannot be read; such a record has no fields.
func (r Record) Bad() string { return r.r.bad }

// Fields is how many fields to decrypt the record holds.
func (r Record) Fields() int { return len(r.r.fields) }

// Field is the i-th field to decrypt of the record.
func (r Record) Field(i int) Field { return Field{&r.r.fields[i]} }

// Field is one field of a Record.
type Field struct{ f *field }

// Name is the field's column or key.
func (f Field) Name() string { return f.f.name }

// Bad says why the field is not a ciphertext's text (a JSON value that is not a string).
func (f Field) Bad() string { return f.f.bad }

// Null reports an empty or null field, which holds no ciphertext.
func (f Field) Null() bool { return f.f.null }

// Text is the ciphertext's text, unquoted.
func (f Field) Text() []byte { return f.f.text }
