package encryption

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// Size checks of sdk-native test_encryptor.cpp (exit/FORMATS.md).
func TestEncryptedSizeFormulas(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	tests := []struct {
		name    string
		v       Version
		clear   uint64
		padding Padding
		want    uint64
	}{
		{"v2", V2, 100, 0, 141},
		{"v3", V3, 100, 0, 117},
		{"v5", V5, 100, 0, 157},
		{"v9", V9, 100, 0, 149},
		{"v4 empty", V4, 0, 0, 61},
		{"v4 2 MiB + 5", V4, 2*mib + 5, 0, 2*mib + 5 + 3*61},
		{"v11 empty step 1", V11, 0, PaddingOff, 37 + 4 + 16 + 1},
		{"v11 2 MiB + 5 step 1", V11, 2*mib + 5, PaddingOff, 37 + 2*mib + 5 + 3*20},
		{"v10 auto", V10, 19, PaddingAuto, 49 + 21},
		{"v6 step 5", V6, 42, PaddingStep(5), 17 + 46},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := EncryptedSize(tc.v, tc.clear, EncryptOptions{Padding: tc.padding})
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
	t.Run("v11 2 MiB + 5 encrypts to that size", func(t *testing.T) {
		t.Parallel()
		enc, _, err := Encrypt(V11, randomKey(t), make([]byte, 2*mib+5), EncryptOptions{Padding: PaddingOff})
		require.NoError(t, err)
		require.Len(t, enc, 37+2*mib+5+3*20)
	})
}

func TestEncryptRejects(t *testing.T) {
	t.Parallel()
	key := make([]byte, KeySize)
	tests := []struct {
		name string
		v    Version
		key  []byte
		opts EncryptOptions
		err  error
	}{
		{"v1", V1, key, EncryptOptions{}, ErrInvalidArgument},
		{"v12", 12, key, EncryptOptions{}, ErrInvalidArgument},
		{"short key", V2, key[:31], EncryptOptions{}, ErrInvalidKey},
		{"short session key", V11, key[:31], EncryptOptions{}, ErrInvalidKey},
		{"v4 chunk too small", V4, key, EncryptOptions{ChunkSize: 61}, ErrInvalidArgument},
		{"v8 chunk too small", V8, key, EncryptOptions{ChunkSize: 62}, ErrInvalidArgument},
		{"v11 chunk too small", V11, key, EncryptOptions{ChunkSize: 20}, ErrInvalidArgument},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, _, err := Encrypt(tc.v, tc.key, []byte("x"), tc.opts)
			require.ErrorIs(t, err, tc.err)
		})
	}
}
