package table

import (
	"bytes"
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// memChunk is the size of the buffers the rows' values are copied into.
const memChunk = 1 << 20

// slabRows is the number of rows whose cells readBatch allocates at once.
const slabRows = 4096

// release gives the batch's buffers back once it is written: its rows are gone with them.
func (b *batch) release() {
	for _, c := range b.chunks {
		putBuffer(c)
	}
	if b.cells != nil {
		putCells(b.cells)
	}
	b.chunks, b.mem, b.rows, b.out, b.cells, b.notes = nil, nil, nil, nil, nil, nil
}

// maxBatchBytes ends a batch early when its rows hold this much (big ciphertexts): memory
// stays bounded by the batches in flight whatever the rows' sizes.
const maxBatchBytes = 8 << 20

// batch is rows of one range, read in key order, then decrypted, then written.
type batch struct {
	rng  *keyRange
	prev []byte // the range's last key before this batch (nil: from the range's start)
	rows [][][]byte
	last []byte // the last row's key
	end  bool   // the range holds nothing after this batch
	mem  []byte // holds the rows' values (the last of chunks)
	// chunks are the buffers holding the rows' values, given back once the batch is written;
	// cells the slices of its rows and results, given back with them.
	chunks [][]byte
	cells  *cells
	// notes are the text ciphertexts that did not decode (their text kept in rows, the
	// message here) and those whose text decoded to no byte ("" here), by row*len(cols)+col.
	notes map[int]string
	// Filled in by the decryption: per row, per field (Options.Fields order).
	out    [][]fieldOut
	counts counts
	done   chan struct{} // closed once out is filled in (or the decryption failed)
}

// fieldOut is a field's value in the destination and, when it failed, why.
type fieldOut struct {
	val       []byte // nil: NULL
	code, msg string
}

// counts are what a batch (or a run) did with its fields.
type counts struct {
	rows, decrypted, empty, failed int64
}

func (c *counts) add(o counts) {
	c.rows += o.rows
	c.decrypted += o.decrypted
	c.empty += o.empty
	c.failed += o.failed
}

// decodeField appends the bytes of the text ciphertext v (a field's) to b.mem, which has room
// for v: the text itself when it does not decode, noted at note with the message. The text
// is not kept: the batch holds the bytes it sends, and copies v once.
func (s *source) decodeField(b *batch, note int, v []byte) []byte {
	start := len(b.mem)
	out, err := s.decode(b.mem, v)
	switch {
	case err != nil:
		b.note(note, err.Error())
		return append(b.mem[:start], v...)
	case len(out) == start:
		b.note(note, "")
	}
	return out
}

// note records a text ciphertext's note (decode errors and empty decodings, both rare).
func (b *batch) note(at int, msg string) {
	if b.notes == nil {
		b.notes = map[int]string{}
	}
	b.notes[at] = msg
}

// readBatch reads up to limit rows of r after its key prev (its start when prev is nil),
// stopping early after maxBatchBytes.
func (s *source) readBatch(ctx context.Context, r *keyRange, prev []byte, limit int) (*batch, error) {
	sql, params, oids, formats := s.batchQuery(r, prev, limit)
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the source: %s", pgMessage(err))
	}
	defer conn.Release()
	rr := conn.Conn().PgConn().ExecParams(ctx, sql, params, oids, formats, []int16{pgx.BinaryFormatCode})
	b := &batch{rng: r, prev: prev, cells: getCells()}
	c := b.cells
	b.rows = grow(c.rows, min(limit, slabRows))[:0]
	size, cut := 0, false
	// The rows' cells, slabRows rows at a time (the first slab recycled).
	c.slab = grow(c.slab, min(limit, slabRows)*len(s.cols))
	slab := c.slab
	for rr.NextRow() {
		vals := rr.Values()
		if len(slab) < len(vals) {
			slab = make([][]byte, min(limit, slabRows)*len(vals))
		}
		row := slab[:len(vals):len(vals)]
		slab = slab[len(vals):]
		size += s.copyRow(b, row, vals)
		b.rows = append(b.rows, row)
		c.rows = b.rows
		if size >= maxBatchBytes {
			cut = true
			break
		}
	}
	if _, err := rr.Close(); err != nil {
		return nil, fmt.Errorf("read the source: %s", pgMessage(err))
	}
	if len(b.rows) > 0 {
		// A copy: the next batch starts after it, once this batch's buffers are reused.
		b.last = bytes.Clone(b.rows[len(b.rows)-1][s.key])
	}
	b.end = !cut && len(b.rows) < limit
	return b, nil
}

// batchQuery is the SELECT of up to limit rows of r after its key prev (its start when prev
// is nil), in key order, with its parameters (the bounds, binary), their types and formats.
func (s *source) batchQuery(r *keyRange, prev []byte, limit int) (sql string, params [][]byte, oids []uint32, formats []int16) {
	var where string
	keyOID := s.cols[s.key].oid
	lo := prev
	if lo == nil {
		lo = r.lo
	}
	if lo != nil {
		params, oids = append(params, lo), append(oids, keyOID)
		where = fmt.Sprintf(" WHERE %s > $1", s.qkey)
	}
	if r.hi != nil {
		params, oids = append(params, r.hi), append(oids, keyOID)
		if where == "" {
			where = " WHERE "
		} else {
			where += " AND "
		}
		where += fmt.Sprintf("%s <= $%d", s.qkey, len(params))
	}
	formats = make([]int16, len(params))
	for i := range formats {
		formats[i] = pgx.BinaryFormatCode
	}
	sql = fmt.Sprintf("SELECT %s FROM %s%s ORDER BY %s LIMIT %d", s.list, s.from, where, s.qkey, limit)
	return sql, params, oids, formats
}

// copyRow copies the values of the batch's next row (vals, which the reader reuses) into its
// buffers, text ciphertexts decoded, and points row's cells at them (nil: NULL). It returns
// the bytes read.
func (s *source) copyRow(b *batch, row, vals [][]byte) int {
	size := 0
	first := len(b.rows) * len(vals) // the row's first cell, by which decodeField notes
	for i, v := range vals {
		if v == nil {
			continue
		}
		// Buffers of the batch: a new one when full (the old one stays referenced); one
		// at the first value, so that an empty value is an empty slice, not nil (NULL).
		if cap(b.mem)-len(b.mem) < len(v) || b.mem == nil {
			b.mem = getBuffer(max(memChunk, len(v)))
			b.chunks = append(b.chunks, b.mem)
		}
		start := len(b.mem)
		if s.cols[i].text && len(v) > 0 {
			b.mem = s.decodeField(b, first+i, v)
		} else {
			b.mem = append(b.mem, v...)
		}
		row[i] = b.mem[start:len(b.mem):len(b.mem)]
		size += len(v)
	}
	return size
}
