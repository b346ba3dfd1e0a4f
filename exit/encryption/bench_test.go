package encryption

import (
	"bytes"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/chacha20poly1305"
)

var benchSizes = []struct {
	name string
	size int
}{
	{"1KiB", 1 << 10},
	{"64KiB", 64 << 10},
	{"16MiB", 16 << 20},
}

// encryptV1 builds a format-1 buffer (Encrypt cannot produce it).
func encryptV1(b testing.TB, key, clear []byte) []byte {
	aead, err := newAEAD(key)
	require.NoError(b, err)
	iv := bytes.Repeat([]byte{0x42}, ivSize)
	out := aead.Seal([]byte{byte(V1)}, iv, clear, nil)
	return append(out, iv...)
}

func benchCiphertext(b *testing.B, v Version, key, clear []byte) ([]byte, KeyFinder) {
	if v == V1 {
		enc := encryptV1(b, key, clear)
		_, rid, err := ExtractResourceID(enc)
		require.NoError(b, err)
		return enc, KeyMap{rid.ID: key}
	}
	enc, rid, err := Encrypt(v, key, clear, EncryptOptions{})
	require.NoError(b, err)
	return enc, KeyMap{rid.ID: key}
}

// BenchmarkDecrypt measures decryption per format and size. Simple formats
// go through Decrypt; stream formats through NewDecryptReader (1 MiB
// chunks) copied to io.Discard. SetBytes counts clear bytes.
func BenchmarkDecrypt(b *testing.B) {
	key := bytes.Repeat([]byte{7}, KeySize)
	for v := V1; v <= V11; v++ {
		for _, sz := range benchSizes {
			b.Run(fmt.Sprintf("%s/%s", v, sz.name), func(b *testing.B) {
				clear := bytes.Repeat([]byte{0xa5}, sz.size)
				enc, keys := benchCiphertext(b, v, key, clear)
				b.SetBytes(int64(sz.size))
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if v.IsStream() {
						r, err := NewDecryptReader(bytes.NewReader(enc), keys)
						if err != nil {
							b.Fatal(err)
						}
						if _, err := io.Copy(io.Discard, r); err != nil {
							b.Fatal(err)
						}
					} else if _, _, err := Decrypt(keys, enc); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkRawXChaChaOpen is the reference rate: one XChaCha20-Poly1305
// open of the whole buffer into a preallocated destination.
func BenchmarkRawXChaChaOpen(b *testing.B) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			aead, nonce, sealed, dst := rawSetup(b, sz.size)
			b.SetBytes(int64(sz.size))
			b.ResetTimer()
			for b.Loop() {
				if _, err := aead.Open(dst[:0], nonce, sealed, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func rawSetup(b testing.TB, size int) (aead interface {
	Open(dst, nonce, ciphertext, ad []byte) ([]byte, error)
}, nonce, sealed, dst []byte) {
	x, err := chacha20poly1305.NewX(bytes.Repeat([]byte{7}, KeySize))
	require.NoError(b, err)
	nonce = make([]byte, ivSize)
	sealed = x.Seal(nil, nonce, bytes.Repeat([]byte{0xa5}, size), nil)
	return x, nonce, sealed, make([]byte, size)
}

// BenchmarkV11VsRaw runs a raw 16 MiB open and a 16 MiB format-11 stream
// decryption in every iteration (alternating which goes first), so both
// see the same machine load, and reports the median rate of each and the
// stream rate as a percentage of the raw rate.
func BenchmarkV11VsRaw(b *testing.B) {
	const size = 16 << 20
	key := bytes.Repeat([]byte{7}, KeySize)
	clear := bytes.Repeat([]byte{0xa5}, size)
	enc, keys := benchCiphertext(b, V11, key, clear)
	aead, nonce, sealed, dst := rawSetup(b, size)
	rawOpen := func() time.Duration {
		t0 := time.Now()
		if _, err := aead.Open(dst[:0], nonce, sealed, nil); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	streamOpen := func() time.Duration {
		t0 := time.Now()
		r, err := NewDecryptReader(bytes.NewReader(enc), keys)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	var raw, stream []time.Duration
	b.SetBytes(size)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			raw = append(raw, rawOpen())
			stream = append(stream, streamOpen())
		} else {
			stream = append(stream, streamOpen())
			raw = append(raw, rawOpen())
		}
	}
	mr, ms := median(raw), median(stream)
	b.ReportMetric(size/(1<<20)/mr.Seconds(), "raw-MiB/s")
	b.ReportMetric(size/(1<<20)/ms.Seconds(), "v11-MiB/s")
	b.ReportMetric(100*mr.Seconds()/ms.Seconds(), "v11/raw-%")
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkStream1GiB streams 1 GiB of format 11 (1 MiB chunks, encrypted
// on the fly) through the decrypt reader and reports the peak heap in use,
// sampled every 5 ms.
func BenchmarkStream1GiB(b *testing.B) {
	const total = 1 << 30
	key := bytes.Repeat([]byte{7}, KeySize)
	b.SetBytes(total)
	var peak uint64
	for b.Loop() {
		src, rid, err := newLazyStream(V11, key, total, EncryptOptions{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Go(func() {
			var ms runtime.MemStats
			tick := time.NewTicker(5 * time.Millisecond)
			defer tick.Stop()
			for {
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapInuse)
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		})
		r, err := NewDecryptReader(src, KeyMap{rid.ID: key})
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, r)
		close(stop)
		wg.Wait()
		if err != nil || n != total {
			b.Fatalf("streamed %d bytes: %v", n, err)
		}
	}
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// BenchmarkDecryptCopyPath decrypts a 16 MiB format-11 stream from a
// source that is a plain io.Reader (no io.WriterTo), so every chunk is
// first copied into the chunk buffer: the path of network or file input.
func BenchmarkDecryptCopyPath(b *testing.B) {
	const size = 16 << 20
	key := bytes.Repeat([]byte{7}, KeySize)
	enc, keys := benchCiphertext(b, V11, key, bytes.Repeat([]byte{0xa5}, size))
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		r, err := NewDecryptReader(struct{ io.Reader }{bytes.NewReader(enc)}, keys)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r); err != nil {
			b.Fatal(err)
		}
	}
}
