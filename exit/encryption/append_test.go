package encryption

import (
	"bytes"
	mrand "math/rand/v2"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// AppendDecrypt gives Decrypt's clear bytes after what dst holds, in every format; on a
// failure it gives dst back as it was, with Decrypt's error.
func TestAppendDecrypt(t *testing.T) {
	t.Parallel()
	for _, v := range allEncryptable {
		t.Run(v.String(), func(t *testing.T) {
			t.Parallel()
			rng := mrand.New(mrand.NewPCG(uint64(v), 37))
			prefix := []byte("earlier items")
			for range 20 {
				clear := randomClear(rng, 2000)
				key := randomKey(t)
				opts := EncryptOptions{}
				if v.IsStream() {
					opts.ChunkSize = minChunkSize(v) + rng.IntN(400)
				}
				enc, rid, err := Encrypt(v, key, clear, opts)
				require.NoError(t, err)
				keys := KeyMap{rid.ID: key}
				dst := append(make([]byte, 0, len(prefix)+rng.IntN(len(enc)+1)), prefix...)
				got, gotRID, err := AppendDecrypt(dst, keys, enc)
				require.NoError(t, err)
				require.Equal(t, append(bytes.Clone(prefix), clear...), got)
				require.Equal(t, rid, gotRID)

				tampered := bytes.Clone(enc)
				tampered[len(tampered)-1] ^= 1
				_, _, want := Decrypt(keys, tampered)
				require.Error(t, want)
				got, _, err = AppendDecrypt(dst, keys, tampered)
				require.Equal(t, want.Error(), err.Error())
				require.Equal(t, prefix, got)

				_, _, err = AppendDecrypt(dst, KeyMap{}, enc)
				require.ErrorIs(t, err, ErrKeyNotFound)
			}
		})
	}
}

// A simple format opens into the buffer it is given: nothing of the value's size is allocated
// (the AEAD's small state is).
func TestAppendDecryptSimpleAllocates(t *testing.T) {
	clear := bytes.Repeat([]byte{'a'}, 4000)
	session := randomKey(t)
	enc, rid, err := Encrypt(V10, session, clear, EncryptOptions{})
	require.NoError(t, err)
	keys := KeyMap{rid.ID: session}
	buf := make([]byte, 0, 8192)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 100
	for range runs {
		if _, _, err := AppendDecrypt(buf, keys, enc); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	require.Less(t, (after.TotalAlloc-before.TotalAlloc)/runs, uint64(len(clear)/4), "bytes allocated per value")
}
