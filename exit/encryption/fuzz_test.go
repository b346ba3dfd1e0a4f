package encryption

import (
	"bytes"
	"errors"
	"io"
	mrand "math/rand/v2"
	"testing"
)

var fuzzSentinels = []error{
	ErrUnknownFormat, ErrTruncated, ErrDecryptionFailed, ErrBadPadding,
	ErrLimitExceeded, ErrKeyNotFound, ErrInvalidKey,
}

func requireTyped(t *testing.T, err error) {
	t.Helper()
	for _, s := range fuzzSentinels {
		if errors.Is(err, s) {
			return
		}
	}
	t.Fatalf("untyped error: %v", err)
}

// fuzzLimits keeps allocations small whatever the input declares.
var fuzzLimits = WithLimits(Limits{MaxChunkSize: 1 << 16, MaxSimpleSize: 1 << 16})

func addVectorSeeds(f *testing.F, stream bool) {
	for _, vec := range vectors {
		enc := mustHex(f, vec.encrypted)
		if Version(enc[0]).IsStream() == stream {
			f.Add(mustHex(f, vec.key), enc)
		}
	}
}

// FuzzDecryptSimple decrypts arbitrary buffers with a key answered for any
// ID: never a panic, only typed errors, and both entry points agree.
func FuzzDecryptSimple(f *testing.F) {
	addVectorSeeds(f, false)
	f.Fuzz(func(t *testing.T, key, data []byte) {
		keys := allKeys(key)
		got, _, err := Decrypt(keys, data, fuzzLimits)
		if err != nil {
			requireTyped(t, err)
		}
		r, rerr := NewDecryptReader(bytes.NewReader(data), keys, fuzzLimits)
		var streamed []byte
		if rerr == nil {
			streamed, rerr = io.ReadAll(r)
		}
		if (err == nil) != (rerr == nil) {
			t.Fatalf("Decrypt: %v, reader: %v", err, rerr)
		}
		if err == nil && !bytes.Equal(got, streamed) {
			t.Fatal("Decrypt and reader disagree")
		}
		inPlace, _, ierr := DecryptInPlace(keys, bytes.Clone(data))
		if (err == nil) != (ierr == nil) || err == nil && !bytes.Equal(got, inPlace) {
			t.Fatalf("Decrypt (%v) and DecryptInPlace (%v) disagree", err, ierr)
		}
	})
}

// FuzzDecryptStream decrypts arbitrary streams through the pull path (one
// byte at a time) and the push path (pieces): same output or both fail,
// with typed errors.
func FuzzDecryptStream(f *testing.F) {
	addVectorSeeds(f, true)
	f.Fuzz(func(t *testing.T, key, data []byte) {
		keys := allKeys(key)
		var pulled []byte
		r, err := NewDecryptReader(bytes.NewReader(data), keys, fuzzLimits)
		if err == nil {
			pulled, err = io.ReadAll(r)
		}
		var pushed bytes.Buffer
		r2, err2 := NewDecryptReader(&piecewise{data: data, rng: mrand.New(mrand.NewPCG(uint64(len(data)), 1))}, keys, fuzzLimits)
		if err2 == nil {
			_, err2 = r2.WriteTo(&pushed)
		}
		if err != nil {
			requireTyped(t, err)
		}
		if err2 != nil {
			requireTyped(t, err2)
		}
		if (err == nil) != (err2 == nil) {
			t.Fatalf("pull: %v, push: %v", err, err2)
		}
		if err == nil && !bytes.Equal(pulled, pushed.Bytes()) {
			t.Fatal("pull and push disagree")
		}
	})
}

// FuzzRoundTrip encrypts arbitrary data with arbitrary parameters and
// requires the exact data back and the predicted size.
func FuzzRoundTrip(f *testing.F) {
	f.Add([]byte("this is very secret"), uint8(11), uint16(30), uint16(0))
	f.Add([]byte{}, uint8(8), uint16(70), uint16(1))
	f.Add([]byte("a secret"), uint8(4), uint16(62), uint16(5))
	f.Fuzz(func(t *testing.T, clear []byte, version uint8, chunk, padding uint16) {
		v := V2 + Version(version%10)
		opts := EncryptOptions{Padding: Padding(padding % 300)}
		if v.IsStream() {
			opts.ChunkSize = minChunkSize(v) + int(chunk%500)
		}
		key := bytes.Repeat([]byte{version}, KeySize)
		enc, rid, err := Encrypt(v, key, clear, opts)
		if err != nil {
			t.Fatal(err)
		}
		size, err := EncryptedSize(v, uint64(len(clear)), opts)
		if err != nil || size != uint64(len(enc)) {
			t.Fatalf("size %d, predicted %d (%v)", len(enc), size, err)
		}
		got, _, err := Decrypt(KeyMap{rid.ID: key}, enc)
		if err != nil || !bytes.Equal(got, clear) {
			t.Fatalf("round trip: %v", err)
		}
	})
}
