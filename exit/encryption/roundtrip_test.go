package encryption

import (
	"bytes"
	"crypto/rand"
	"io"
	mrand "math/rand/v2"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

var allEncryptable = []Version{V2, V3, V4, V5, V6, V7, V8, V9, V10, V11}

// randomClear is up to max-1 bytes of clear text of random length, from rng (repeatable).
func randomClear(rng *mrand.Rand, max int) []byte {
	clear := make([]byte, rng.IntN(max))
	for i := range clear {
		clear[i] = byte(rng.Uint32())
	}
	return clear
}

func randomKey(t testing.TB) []byte {
	k := make([]byte, KeySize)
	_, err := rand.Read(k)
	require.NoError(t, err)
	return k
}

func TestRoundTripRandom(t *testing.T) {
	t.Parallel()
	for _, v := range allEncryptable {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			rng := mrand.New(mrand.NewPCG(uint64(v), 42))
			for i := range 60 {
				size := rng.IntN(3000)
				if i%10 == 0 {
					size = 0
				}
				opts := EncryptOptions{}
				switch rng.IntN(3) {
				case 1:
					opts.Padding = PaddingOff
				case 2:
					opts.Padding = PaddingStep(uint32(2 + rng.IntN(300)))
				}
				if v.IsStream() {
					opts.ChunkSize = minChunkSize(v) + rng.IntN(400)
				}
				clear := make([]byte, size)
				for j := range clear {
					clear[j] = byte(rng.Uint32())
				}
				// Trailing zeros and 0x80 bytes must survive unpadding.
				if size > 2 {
					clear[size-1] = 0
					clear[size-2] = 0x80
				}
				key := randomKey(t)
				enc, rid, err := Encrypt(v, key, clear, opts)
				require.NoError(t, err)
				want, err := EncryptedSize(v, uint64(size), opts)
				require.NoError(t, err)
				require.Equal(t, want, uint64(len(enc)), "size=%d opts=%+v", size, opts)

				keys := KeyMap{rid.ID: key}
				got, gotRID, err := Decrypt(keys, enc)
				require.NoError(t, err, "size=%d opts=%+v", size, opts)
				require.Equal(t, clear, got)
				require.Equal(t, rid, gotRID)

				// In place: the clear text is a part of the ciphertext's buffer for the simple
				// formats.
				buf := bytes.Clone(enc)
				got, gotRID, err = DecryptInPlace(keys, buf)
				require.NoError(t, err, "size=%d opts=%+v", size, opts)
				require.Equal(t, clear, got)
				require.Equal(t, rid, gotRID)
				if !v.IsStream() && len(got) > 0 {
					before := bytes.Clone(buf)
					got[0]++
					require.NotEqual(t, before, buf, "the clear text is not in the buffer given")
				}

				r, err := NewDecryptReader(iotest.HalfReader(bytes.NewReader(enc)), keys)
				require.NoError(t, err)
				got, err = io.ReadAll(r)
				require.NoError(t, err)
				require.Equal(t, clear, got)
			}
		})
	}
}

// Streams written in pieces of random sizes equal streams written at once.
func TestEncryptWriterPieces(t *testing.T) {
	t.Parallel()
	for _, v := range []Version{V4, V8, V11} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			rng := mrand.New(mrand.NewPCG(uint64(v), 7))
			for range 30 {
				clear := randomClear(rng, 5000)
				var seed [32]byte
				seed[0] = byte(rng.Uint32())
				id := SimpleID{1, 2, 3}
				opts := func() EncryptOptions {
					return EncryptOptions{
						ChunkSize:  minChunkSize(v) + rng.IntN(200),
						Padding:    PaddingStep(uint32(rng.IntN(50))),
						ResourceID: &id, SessionID: &id,
						Rand: mrand.NewChaCha8(seed),
					}
				}
				o := opts()
				key := randomKey(t)
				whole, _, err := Encrypt(v, key, clear, o)
				require.NoError(t, err)

				o.Rand = mrand.NewChaCha8(seed)
				var buf bytes.Buffer
				w, err := NewEncryptWriter(&buf, v, key, o)
				require.NoError(t, err)
				rest := clear
				for len(rest) > 0 {
					n := min(len(rest), rng.IntN(300))
					m, err := w.Write(rest[:n])
					require.NoError(t, err)
					require.Equal(t, n, m)
					rest = rest[n:]
				}
				require.NoError(t, w.Close())
				require.NoError(t, w.Close(), "second Close is a no-op")
				require.Equal(t, whole, buf.Bytes())
				_, err = w.Write([]byte("x"))
				require.Error(t, err, "write after close")
			}
		})
	}
}

// Data exactly filling chunks needs the extra final chunk (exit/FORMATS.md, "Stream formats 4 and 8").
func TestStreamExactMultipleOfChunk(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		v     Version
		size  int
		clear int
	}{
		{"v4 one full chunk", V4, 100, 100 - 61},
		{"v4 three full chunks", V4, 100, 3 * (100 - 61)},
		{"v8 one full chunk off", V8, 100, 100 - 62},
		{"v11 one full chunk off", V11, 100, 100 - 20},
		{"v11 two full chunks off", V11, 100, 2 * (100 - 20)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			key := randomKey(t)
			clear := bytes.Repeat([]byte{7}, tc.clear)
			enc, rid, err := Encrypt(tc.v, key, clear, EncryptOptions{ChunkSize: tc.size, Padding: PaddingOff})
			require.NoError(t, err)
			// Last chunk is the empty one: 61, 62 or 20 bytes.
			last := map[Version]int{V4: 61, V8: 62, V11: 20}[tc.v]
			hdr := 0
			if tc.v == V11 {
				hdr = v11Header
			}
			require.Equal(t, hdr+tc.clear/(tc.size-last)*tc.size+last, len(enc))
			got, _, err := Decrypt(KeyMap{rid.ID: key}, enc)
			require.NoError(t, err)
			require.Equal(t, clear, got)
			// Without the final chunk the stream is incomplete, not shorter.
			_, _, err = Decrypt(KeyMap{rid.ID: key}, enc[:len(enc)-last])
			require.ErrorIs(t, err, ErrIncompleteStream)
			require.ErrorIs(t, err, ErrDecryptionFailed)
		})
	}
}
