package encryption

import (
	"bytes"
	"io"
	mrand "math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// piecewise is a source that implements io.WriterTo by pushing its data in
// pieces of random sizes, so chunks straddle the pieces.
type piecewise struct {
	data []byte
	rng  *mrand.Rand
}

func (p *piecewise) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), 1+p.rng.IntN(50))], p.data)
	p.data = p.data[n:]
	return n, nil
}

func (p *piecewise) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(p.data) > 0 {
		n := min(len(p.data), 1+p.rng.IntN(400))
		m, err := w.Write(p.data[:n])
		total += int64(m)
		p.data = p.data[m:]
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

func TestStreamSourcesAndConsumers(t *testing.T) {
	t.Parallel()
	for _, v := range []Version{V4, V8, V11} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			rng := mrand.New(mrand.NewPCG(uint64(v), 99))
			for range 40 {
				clear := randomClear(rng, 2000)
				key := randomKey(t)
				enc, rid, err := Encrypt(v, key, clear, EncryptOptions{
					ChunkSize: minChunkSize(v) + rng.IntN(150),
					Padding:   PaddingStep(uint32(rng.IntN(40))),
				})
				require.NoError(t, err)
				keys := KeyMap{rid.ID: key}

				// Pushed in pieces, consumed with WriteTo.
				r, err := NewDecryptReader(&piecewise{data: enc, rng: rng}, keys)
				require.NoError(t, err)
				var out bytes.Buffer
				_, err = r.WriteTo(&out)
				require.NoError(t, err)
				require.Equal(t, clear, out.Bytes())

				// A few Reads first, then WriteTo from the middle.
				r, err = NewDecryptReader(bytes.NewReader(enc), keys)
				require.NoError(t, err)
				head := make([]byte, rng.IntN(len(clear)+1))
				_, err = io.ReadFull(r, head)
				require.NoError(t, err)
				out.Reset()
				_, err = io.Copy(&out, r)
				require.NoError(t, err)
				require.Equal(t, clear, append(head, out.Bytes()...))

				// Truncated by one byte: an error whatever the path.
				r, err = NewDecryptReader(&piecewise{data: enc[:len(enc)-1], rng: rng}, keys)
				if err == nil {
					_, err = r.WriteTo(io.Discard)
				}
				require.Error(t, err)
			}
		})
	}
}
