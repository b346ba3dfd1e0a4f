package keys

import (
	"crypto/rand"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/curve25519"
	"golang.org/x/crypto/nacl/box"
)

// The Ed25519 route gives the pair X25519 itself gives for the same private key.
func TestEncryptionKeyPairFromSeedMatchesX25519(t *testing.T) {
	t.Parallel()
	seed := make([]byte, 32)
	for i := 0; i < 500; i++ {
		_, _ = rand.Read(seed)
		if i == 0 {
			clear(seed)
		}
		kp, err := EncryptionKeyPairFromSeed(seed)
		require.NoError(t, err)
		want, err := curve25519.X25519(kp.Private[:], curve25519.Basepoint)
		require.NoError(t, err)
		require.Equal(t, want, kp.Public[:], "seed %x", seed)
		again, err := EncryptionKeyPairFromPrivate(kp.Private[:])
		require.NoError(t, err)
		require.Equal(t, kp, again)
	}
	_, err := EncryptionKeyPairFromSeed(seed[:31])
	require.ErrorIs(t, err, ErrInvalidLength)
}

// A box sealed with SealFast opens with libsodium-compatible OpenAnonymous and with Open.
func TestSealFastIsASealedBox(t *testing.T) {
	t.Parallel()
	recipient := newPair(t)
	sealed, err := SealFast([]byte("resource key 32 bytes long......"), &recipient.Public, rand.Reader)
	require.NoError(t, err)
	require.Len(t, sealed, 32+SealOverhead)
	out, ok := box.OpenAnonymous(nil, sealed, &recipient.Public, &recipient.Private)
	require.True(t, ok)
	require.Equal(t, "resource key 32 bytes long......", string(out))
	got, err := OpenSealedKey(sealed, recipient)
	require.NoError(t, err)
	require.Equal(t, out, got[:])

	other := newPair(t)
	_, err = Open(sealed, other)
	require.ErrorIs(t, err, ErrOpenFailed)
}

// BenchmarkEncryptionKeyPair: a pair from a private key (what an import holds, on the
// fixed-base table), from a seed, and the X25519 ladder with the base point as the baseline.
func BenchmarkEncryptionKeyPair(b *testing.B) {
	kp, err := NewEncryptionKeyPair(rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("x25519-ladder", func(b *testing.B) {
		for b.Loop() {
			_, _ = curve25519.X25519(kp.Private[:], curve25519.Basepoint)
		}
	})
	b.Run("from-private", func(b *testing.B) {
		for b.Loop() {
			_, _ = EncryptionKeyPairFromPrivate(kp.Private[:])
		}
	})
	b.Run("from-seed", func(b *testing.B) {
		for b.Loop() {
			_, _ = GenerateEncryptionKeyPair(rand.Reader)
		}
	})
}
