package encryption

import (
	"bytes"
	"encoding/binary"
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// decryptAll decrypts through both entry points and requires them to agree.
func decryptAll(t *testing.T, keys KeyFinder, enc []byte) ([]byte, error) {
	t.Helper()
	got, _, err := Decrypt(keys, enc)
	r, rerr := NewDecryptReader(bytes.NewReader(enc), keys)
	if rerr == nil {
		var streamed []byte
		streamed, rerr = io.ReadAll(r)
		if rerr == nil {
			require.Equal(t, got, streamed)
		}
	}
	require.Equal(t, err == nil, rerr == nil, "Decrypt: %v, reader: %v", err, rerr)
	return got, err
}

func TestUnknownFormat(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"zero", append([]byte{0}, make([]byte, 100)...)},
		{"v12", append([]byte{12}, make([]byte, 100)...)},
		{"0xff", append([]byte{0xff}, make([]byte, 100)...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := ExtractResourceID(tc.in)
			require.ErrorIs(t, err, ErrUnknownFormat)
			_, _, err = Decrypt(KeyMap{}, tc.in)
			require.ErrorIs(t, err, ErrUnknownFormat)
			_, err = NewDecryptReader(bytes.NewReader(tc.in), KeyMap{})
			require.ErrorIs(t, err, ErrUnknownFormat)
		})
	}
}

func streamHeader(v Version, size uint32) []byte {
	var h []byte
	if v == V11 {
		h = append([]byte{byte(v)}, make([]byte, 2*IDSize)...)
		return binary.LittleEndian.AppendUint32(h, size)
	}
	h = binary.LittleEndian.AppendUint32([]byte{byte(v)}, size)
	return append(h, make([]byte, IDSize+ivSize)...)
}

// allKeys answers every lookup with the same key.
func allKeys(key []byte) KeyFinder {
	return KeyFinderFunc(func(SimpleID) ([]byte, error) { return key, nil })
}

func TestChunkSizeOutOfRange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		v    Version
		size uint32
		err  error
	}{
		{"v4 4 GiB", V4, 0xffffffff, ErrLimitExceeded},
		{"v8 4 GiB", V8, 0xffffffff, ErrLimitExceeded},
		{"v11 4 GiB", V11, 0xffffffff, ErrLimitExceeded},
		{"v11 above default limit", V11, DefaultMaxChunkSize + 1, ErrLimitExceeded},
		{"v4 zero", V4, 0, ErrDecryptionFailed},
		{"v4 header and tag only", V4, 61, ErrDecryptionFailed},
		{"v8 zero", V8, 0, ErrDecryptionFailed},
		{"v8 no room for data", V8, 62, ErrDecryptionFailed},
		{"v11 zero", V11, 0, ErrDecryptionFailed},
		{"v11 metadata only", V11, 20, ErrDecryptionFailed},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			in := append(streamHeader(tc.v, tc.size), make([]byte, 200)...)
			key := make([]byte, KeySize)
			_, _, err := Decrypt(allKeys(key), in)
			require.ErrorIs(t, err, tc.err)
			_, err = NewDecryptReader(bytes.NewReader(in), allKeys(key))
			require.ErrorIs(t, err, tc.err)
		})
	}
}

// A header may declare a huge chunk; the decrypter only allocates for the
// bytes that actually arrive. Not parallel: it measures allocations.
func TestHugeChunkClaimDoesNotAllocate(t *testing.T) {
	in := append(streamHeader(V11, 0xffffffff), make([]byte, 1000)...)
	key := make([]byte, KeySize)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := NewDecryptReader(bytes.NewReader(in), allKeys(key), WithLimits(Limits{MaxChunkSize: 1<<32 - 1}))
	require.NoError(t, err)
	_, err = io.ReadAll(r)
	require.ErrorIs(t, err, ErrDecryptionFailed)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20))
}

func TestSimpleTooLarge(t *testing.T) {
	t.Parallel()
	in := append([]byte{byte(V2)}, make([]byte, 5000)...)
	_, err := NewDecryptReader(bytes.NewReader(in), KeyMap{}, WithLimits(Limits{MaxSimpleSize: 1000}))
	require.ErrorIs(t, err, ErrLimitExceeded)
}

// sealRaw builds a buffer with a chosen plaintext, bypassing the encoder.
func sealRaw(t *testing.T, key, prefix, iv, plain, ad []byte) []byte {
	t.Helper()
	aead, err := newAEAD(key)
	require.NoError(t, err)
	return aead.Seal(append([]byte(nil), prefix...), iv, plain, ad)
}

func TestBadPadding(t *testing.T) {
	t.Parallel()
	key := make([]byte, KeySize)
	key[0] = 1
	zeroIV := make([]byte, ivSize)
	sid := SimpleID{9}
	seed := SimpleID{8}
	sub, err := DeriveSubkey(key, seed)
	require.NoError(t, err)
	v10Header := append(append([]byte{byte(V10)}, sid[:]...), seed[:]...)
	v10IV := append(append([]byte(nil), sid[:]...), make([]byte, 8)...)

	v11Hdr := append(append([]byte{byte(V11)}, sid[:]...), seed[:]...)
	v11Hdr = binary.LittleEndian.AppendUint32(v11Hdr, 30)
	v11Seed := append(append([]byte(nil), sid[:]...), make([]byte, 8)...)
	v11Chunk := func(i uint64, plain []byte) []byte {
		iv := DeriveIV(v11Seed, i)
		return sealRaw(t, sub, nil, iv[:], plain, v11Hdr)
	}
	v8Hdr := streamHeader(V8, 70)
	v8Chunk := func(i uint64, plain []byte) []byte {
		iv := DeriveIV(v8Hdr[5+IDSize:], i)
		return sealRaw(t, key, v8Hdr, iv[:], plain, v8Hdr)
	}
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

	tests := []struct {
		name string
		enc  []byte
		key  []byte
	}{
		{"v6 no marker", sealRaw(t, key, []byte{6}, zeroIV, []byte("abc"), []byte{6}), key},
		{"v6 all zeros", sealRaw(t, key, []byte{6}, zeroIV, []byte{0, 0, 0}, []byte{6}), key},
		{"v6 empty plaintext", sealRaw(t, key, []byte{6}, zeroIV, nil, []byte{6}), key},
		{"v10 no marker", sealRaw(t, sub, v10Header, v10IV, []byte("abc"), v10Header), key},
		{"v11 padding length beyond chunk", cat(v11Hdr, v11Chunk(0, []byte{9, 0, 0, 0, 0})), key},
		{"v11 data after padding", cat(v11Hdr,
			v11Chunk(0, append([]byte{1, 0, 0, 0, 0}, bytes.Repeat([]byte("a"), 9)...)),
			v11Chunk(1, []byte{0, 0, 0, 0, 'b'})), key},
		{"v8 no marker", cat(v8Chunk(0, []byte("abc"))), key},
		{"v8 data after padding", cat(
			v8Chunk(0, []byte{'a', 0x80, 0, 0, 0, 0, 0, 0, 0}),
			v8Chunk(1, []byte{'b', 0x80})), key},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := decryptAll(t, allKeys(tc.key), tc.enc)
			require.ErrorIs(t, err, ErrBadPadding)
		})
	}
}

func TestTruncatedNeverCleanOutput(t *testing.T) {
	t.Parallel()
	for _, vec := range vectors {
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			enc := mustHex(t, vec.encrypted)
			keys := keysFor(t, vec)
			for n := range len(enc) {
				_, err := decryptAll(t, keys, enc[:n])
				require.Error(t, err, "prefix of %d bytes", n)
			}
			for i := range enc {
				for _, bit := range []byte{0x01, 0x80} {
					bad := bytes.Clone(enc)
					bad[i] ^= bit
					got, err := decryptAll(t, keys, bad)
					if err == nil {
						// Format 4 does not authenticate its header: a
						// larger declared chunk size goes unnoticed, but
						// the output must still be the exact clear text.
						require.Equal(t, V4, Version(enc[0]), "bit flip at %d", i)
						require.Equal(t, vec.clear, string(got))
					}
				}
			}
			_, err := decryptAll(t, keys, append(bytes.Clone(enc), 0))
			require.Error(t, err, "trailing byte")
		})
	}
}

func TestTruncatedErrors(t *testing.T) {
	t.Parallel()
	v4 := mustHex(t, vectors[10].encrypted)  // v4 chunk size 70, 70 + 68 bytes
	v11 := mustHex(t, vectors[20].encrypted) // v11 unpadded chunk 30: 37 + 30 + 29
	tests := []struct {
		name string
		vec  vector
		enc  []byte
		err  error
	}{
		// Too short for the format: truncated_data.
		{"v4 header cut", vectors[10], v4[:30], ErrTruncated},
		{"v4 first chunk shorter than its overhead", vectors[10], v4[:50], ErrTruncated},
		{"v11 header only", vectors[20], v11[:37], ErrTruncated},
		{"v11 first chunk shorter than metadata", vectors[20], v11[:37+10], ErrTruncated},
		{"v11 header cut", vectors[20], v11[:20], ErrTruncated},
		{"simple shorter than overhead", vectors[1], mustHex(t, vectors[1].encrypted)[:40], ErrTruncated},
		// A stream cut after its first chunk: an integrity failure.
		{"v4 cut at chunk boundary", vectors[10], v4[:70], ErrIncompleteStream},
		{"v4 cut inside next header", vectors[10], v4[:80], ErrIncompleteStream},
		{"v11 cut at chunk boundary", vectors[20], v11[:67], ErrIncompleteStream},
		{"v11 chunk shorter than metadata", vectors[20], v11[:67+10], ErrIncompleteStream},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := decryptAll(t, keysFor(t, tc.vec), tc.enc)
			require.ErrorIs(t, err, tc.err)
			// The two are told apart: a cut stream is a decryption
			// failure, never "truncated".
			if tc.err == ErrIncompleteStream {
				require.ErrorIs(t, err, ErrDecryptionFailed)
				require.NotErrorIs(t, err, ErrTruncated)
			} else {
				require.NotErrorIs(t, err, ErrIncompleteStream)
				require.NotErrorIs(t, err, ErrDecryptionFailed)
			}
		})
	}
}

func TestReorderedChunks(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	clear := bytes.Repeat([]byte("0123456789"), 30)
	for _, v := range []Version{V4, V8, V11} {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			const size = 100
			enc, rid, err := Encrypt(v, key, clear, EncryptOptions{ChunkSize: size})
			require.NoError(t, err)
			hdr := 0
			if v == V11 {
				hdr = v11Header
			}
			swapped := bytes.Clone(enc)
			copy(swapped[hdr:], enc[hdr+size:hdr+2*size])
			copy(swapped[hdr+size:], enc[hdr:hdr+size])
			_, err = decryptAll(t, KeyMap{rid.ID: key}, swapped)
			require.ErrorIs(t, err, ErrDecryptionFailed)

			dropped := append(bytes.Clone(enc[:hdr+size]), enc[hdr+2*size:]...)
			_, err = decryptAll(t, KeyMap{rid.ID: key}, dropped)
			require.ErrorIs(t, err, ErrDecryptionFailed)
		})
	}
}

// Chunks of another stream encrypted with the same key and resource ID
// are detected by the header check or the tag.
func TestV4HeaderMismatch(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	clear := bytes.Repeat([]byte("x"), 200)
	id := SimpleID{1}
	enc, _, err := Encrypt(V4, key, clear, EncryptOptions{ChunkSize: 100, ResourceID: &id})
	require.NoError(t, err)
	bad := bytes.Clone(enc)
	bad[100+5] ^= 1 // resource ID of the second chunk header
	_, err = decryptAll(t, KeyMap{id: key}, bad)
	require.ErrorIs(t, err, ErrDecryptionFailed)
	require.ErrorContains(t, err, "mismatch in headers")
}

func TestKeyLookupErrors(t *testing.T) {
	t.Parallel()
	vec := vectors[6] // v9
	enc := mustHex(t, vec.encrypted)
	_, _, err := Decrypt(KeyMap{}, enc)
	require.ErrorIs(t, err, ErrKeyNotFound)

	boom := io.ErrClosedPipe
	_, _, err = Decrypt(KeyFinderFunc(func(SimpleID) ([]byte, error) { return nil, boom }), enc)
	require.ErrorIs(t, err, boom, "non-not-found errors abort the lookup")

	_, _, err = Decrypt(allKeys([]byte("short")), enc)
	require.ErrorIs(t, err, ErrInvalidKey)

	wrong := make([]byte, KeySize)
	_, _, err = Decrypt(allKeys(wrong), enc)
	require.ErrorIs(t, err, ErrDecryptionFailed)
}

// detailedNotFound is a KeyFinder error carrying detail, like exitdb's.
type detailedNotFound struct {
	id        SimpleID
	published bool
}

func (e *detailedNotFound) Error() string   { return "no key for " + e.id.String() }
func (e *detailedNotFound) Unwrap() error   { return ErrKeyNotFound }
func (e *detailedNotFound) Published() bool { return e.published }

// A finder's detailed not-found error survives ResolveKey, and for a
// composite ID the lookup that found published keys comes first.
func TestResolveKeyKeepsFinderDetail(t *testing.T) {
	t.Parallel()
	rid := ResourceID{ID: SimpleID{1}, Seed: SimpleID{2}, Composite: true}
	for _, tc := range []struct {
		name      string
		published SimpleID
		want      SimpleID
	}{
		{"published under the session", rid.ID, rid.ID},
		{"published under the seed", rid.Seed, rid.Seed},
		{"published under neither", SimpleID{9}, rid.ID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			finder := KeyFinderFunc(func(id SimpleID) ([]byte, error) {
				return nil, &detailedNotFound{id: id, published: id == tc.published}
			})
			_, err := ResolveKey(rid, finder)
			require.ErrorIs(t, err, ErrKeyNotFound)
			var d *detailedNotFound
			require.ErrorAs(t, err, &d)
			require.Equal(t, tc.want, d.id)
		})
	}
	simple := ResourceID{ID: SimpleID{3}}
	_, err := ResolveKey(simple, KeyFinderFunc(func(id SimpleID) ([]byte, error) {
		return nil, &detailedNotFound{id: id}
	}))
	var d *detailedNotFound
	require.ErrorAs(t, err, &d)
	require.Equal(t, simple.ID, d.id)
}
