package table

import (
	"encoding/binary"
	"io"
)

// rowsReader is the binary COPY stream of a batch's rows, produced as it is read: the values
// go from the batch to the connection's buffer without a copy of the whole batch between.
type rowsReader struct {
	r        *run
	b        *batch
	row, col int
	state    int
	cur      []byte // what is left to hand out of the current piece
	num      [4]byte
}

const (
	stHeader = iota
	stRow
	stLength
	stValue
	stTrailer
	stDone
)

func (c *rowsReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(c.cur) == 0 && !c.next() {
			if n == 0 {
				return 0, io.EOF
			}
			break
		}
		k := copy(p[n:], c.cur)
		c.cur = c.cur[k:]
		n += k
	}
	return n, nil
}

// value is the destination's value of column col of row: the clear field, or the source's.
func (c *rowsReader) value(row, col int) []byte {
	if j := c.r.fieldPos[col]; j >= 0 {
		return c.b.out[row][j].val
	}
	return c.b.rows[row][col]
}

// next moves to the stream's next piece (possibly empty); false at its end.
func (c *rowsReader) next() bool {
	switch c.state {
	case stHeader:
		c.cur, c.state = copyHeader, stRow
	case stRow:
		if c.row == len(c.b.rows) {
			binary.BigEndian.PutUint16(c.num[:2], 0xffff) // the trailer
			c.cur, c.state = c.num[:2], stTrailer
			return true
		}
		binary.BigEndian.PutUint16(c.num[:2], uint16(len(c.b.rows[c.row])))
		c.cur, c.col, c.state = c.num[:2], 0, stLength
	case stLength:
		if c.col == len(c.b.rows[c.row]) {
			c.row++
			c.cur, c.state = nil, stRow
			return true
		}
		v := c.value(c.row, c.col)
		if v == nil {
			binary.BigEndian.PutUint32(c.num[:], 0xffffffff) // -1: NULL
			c.cur = c.num[:]
			c.col++
			return true
		}
		binary.BigEndian.PutUint32(c.num[:], uint32(len(v)))
		c.cur, c.state = c.num[:], stValue
	case stValue:
		c.cur, c.state = c.value(c.row, c.col), stLength
		c.col++
	case stTrailer:
		c.state = stDone
		return false
	default:
		return false
	}
	return true
}
