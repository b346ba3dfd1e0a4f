package table

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
)

// copyHeader starts a binary COPY stream: the signature, no flags, no header extension.
var copyHeader = []byte("PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00")

// copyBuf is a binary COPY stream being built.
type copyBuf struct{ b []byte }

func newCopyBuf(size int) *copyBuf {
	c := &copyBuf{b: getBuffer(size + len(copyHeader) + 2)}
	c.b = append(c.b, copyHeader...)
	return c
}

func (c *copyBuf) tuple(n int) { c.b = binary.BigEndian.AppendUint16(c.b, uint16(n)) }

func (c *copyBuf) field(v []byte) {
	if v == nil {
		c.b = binary.BigEndian.AppendUint32(c.b, 0xffffffff) // -1: NULL
		return
	}
	c.b = binary.BigEndian.AppendUint32(c.b, uint32(len(v)))
	c.b = append(c.b, v...)
}

func (c *copyBuf) end() []byte {
	c.b = binary.BigEndian.AppendUint16(c.b, 0xffff)
	return c.b
}

// write commits a batch: its rows, its failures and its range's new last key, in one
// transaction. The progress row must still be where the batch started (b.prev).
func (r *run) write(ctx context.Context, b *batch) error {
	s := r.src
	var errs *copyBuf
	defer func() {
		if errs != nil {
			putBuffer(errs.b)
		}
	}()
	for i, row := range b.rows {
		for j, o := range b.out[i] {
			if o.code == "" {
				continue
			}
			if errs == nil {
				errs = newCopyBuf(4096)
			}
			errs.tuple(4)
			errs.field(row[s.key])
			errs.field([]byte(s.cols[s.flds[j]].name))
			errs.field([]byte(o.code))
			errs.field([]byte(o.msg))
		}
	}
	tx, err := r.dst.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("write to the destination: %s", pgMessage(err))
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit, a no-op
	pc := tx.Conn().PgConn()
	if len(b.rows) > 0 {
		if _, err := pc.CopyFrom(ctx, &rowsReader{r: r, b: b}, r.dst.copyRows); err != nil {
			return r.rejected(ctx, b, err)
		}
	}
	if errs != nil {
		if _, err := pc.CopyFrom(ctx, bytes.NewReader(errs.end()), r.dst.copyErrs); err != nil {
			return fmt.Errorf("write the failures of keys %s: %s", r.keySpan(b), pgMessage(err))
		}
	}
	last := b.last
	if last == nil {
		last = b.prev
	}
	tag, err := tx.Exec(ctx, "UPDATE "+r.dst.progress+` SET last_key = $1, rows_done = rows_done + $2, decrypted = decrypted + $3,
		empty = empty + $4, failed = failed + $5, finished = $6 WHERE range_no = $7 AND last_key IS NOT DISTINCT FROM $8`,
		last, b.counts.rows, b.counts.decrypted, b.counts.empty, b.counts.failed, b.end, b.rng.no, b.prev)
	if err != nil {
		return fmt.Errorf("write the progress: %s", pgMessage(err))
	}
	if tag.RowsAffected() != 1 {
		return errProgressMoved
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit a batch: %s", pgMessage(err))
	}
	return nil
}

// rejected is the error of a batch the destination refused (a CHECK constraint, a trigger, a
// unique key): named by its keys and the server's message, never a value.
func (r *run) rejected(ctx context.Context, b *batch, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return fmt.Errorf("the destination refused the batch of keys %s (rolled back): %s", r.keySpan(b), pgMessage(err))
}

// keySpan names a batch's first and last keys as text.
func (r *run) keySpan(b *batch) string {
	if len(b.rows) == 0 {
		return "(none)"
	}
	return r.keyText(b.rows[0][r.src.key]) + " to " + r.keyText(b.last)
}

// keyText is a key (binary) as text, for messages.
func (r *run) keyText(raw []byte) string {
	oid := r.src.cols[r.src.key].oid
	if oid == oidUUID && len(raw) == 16 {
		return fmt.Sprintf("%x-%x-%x-%x-%x", raw[0:4], raw[4:6], raw[6:8], raw[8:10], raw[10:16])
	}
	if t, ok := r.types.TypeForOID(oid); ok {
		if v, err := t.Codec.DecodeValue(r.types, oid, 1, raw); err == nil {
			return fmt.Sprint(v)
		}
	}
	return fmt.Sprintf("%x", raw)
}
