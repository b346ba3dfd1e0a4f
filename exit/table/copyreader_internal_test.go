package table

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

// The rows' COPY stream, read in any piece sizes, is the binary COPY format built whole:
// NULLs, empty values, fields replaced by their clear value, an empty batch.
func TestRowsReaderIsTheCopyFormat(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	value := func() []byte {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		v := make([]byte, rng.IntN(3000))
		for i := range v {
			v[i] = byte(rng.IntN(256))
		}
		return v
	}
	for _, nrows := range []int{0, 1, 7, 300} {
		r := &run{fieldPos: []int{-1, 0, -1, 1}}
		b := &batch{}
		for range nrows {
			b.rows = append(b.rows, [][]byte{value(), value(), value(), value()})
			b.out = append(b.out, []fieldOut{{val: value()}, {val: value()}})
		}
		want := newCopyBuf(0)
		for i, row := range b.rows {
			want.tuple(len(row))
			for ci, v := range row {
				if j := r.fieldPos[ci]; j >= 0 {
					v = b.out[i][j].val
				}
				want.field(v)
			}
		}
		wantBytes := bytes.Clone(want.end())
		for name, rd := range map[string]io.Reader{
			"whole":    &rowsReader{r: r, b: b},
			"one byte": iotest.OneByteReader(&rowsReader{r: r, b: b}),
			"half":     iotest.HalfReader(&rowsReader{r: r, b: b}),
		} {
			got, err := io.ReadAll(rd)
			require.NoError(t, err, name)
			require.Equal(t, wantBytes, got, "%d rows, %s", nrows, name)
		}
		require.NoError(t, iotest.TestReader(&rowsReader{r: r, b: b}, wantBytes))
	}
}
