package gen

import (
	"encoding/hex"
	"strconv"
	"time"
)

// row appends one COPY text-format row: values separated by tabs, ended by a newline.
// Binary values are written as \\x<hex> (the bytea hex form, its backslash escaped for COPY).
type row struct {
	b     []byte
	first bool
}

func newRow(dst []byte) *row { return &row{b: dst, first: true} }

func (r *row) sep() {
	if !r.first {
		r.b = append(r.b, '\t')
	}
	r.first = false
}

// bytea appends a bytea value; nil is NULL.
func (r *row) bytea(v []byte) *row {
	r.sep()
	if v == nil {
		r.b = append(r.b, `\N`...)
		return r
	}
	r.b = append(r.b, `\\x`...)
	r.b = hex.AppendEncode(r.b, v)
	return r
}

func (r *row) boolean(v bool) *row {
	r.sep()
	if v {
		r.b = append(r.b, 't')
	} else {
		r.b = append(r.b, 'f')
	}
	return r
}

func (r *row) integer(v int64) *row {
	r.sep()
	r.b = strconv.AppendInt(r.b, v, 10)
	return r
}

// text appends a text value that holds no tab, newline, carriage return or backslash (the
// generator only writes fixed words).
func (r *row) text(v string) *row {
	r.sep()
	r.b = append(r.b, v...)
	return r
}

// timestamp appends an ISO 8601 timestamp with its UTC offset.
func (r *row) timestamp(t time.Time) *row {
	r.sep()
	r.b = t.UTC().AppendFormat(r.b, "2006-01-02T15:04:05.000000+00:00")
	return r
}

func (r *row) end() []byte { return append(r.b, '\n') }
