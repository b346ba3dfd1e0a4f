package encryption

import (
	"bytes"
	"encoding/hex"
	"io"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/require"
)

func TestVectorsDecrypt(t *testing.T) {
	t.Parallel()
	for _, vec := range vectors {
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			enc := mustHex(t, vec.encrypted)
			got, rid, err := Decrypt(keysFor(t, vec), enc)
			require.NoError(t, err)
			require.Equal(t, vec.clear, string(got))
			require.Equal(t, vec.resourceID, hex.EncodeToString(rid.Bytes()))

			// The same in the ciphertext's own bytes.
			got, _, err = DecryptInPlace(keysFor(t, vec), bytes.Clone(enc))
			require.NoError(t, err)
			require.Equal(t, vec.clear, string(got))

			// The same through the streaming reader, one byte at a time.
			r, err := NewDecryptReader(iotest.OneByteReader(bytes.NewReader(enc)), keysFor(t, vec))
			require.NoError(t, err)
			require.Equal(t, vec.resourceID, hex.EncodeToString(r.ResourceID().Bytes()))
			require.Equal(t, Version(enc[0]), r.Version())
			got, err = io.ReadAll(iotest.OneByteReader(r))
			require.NoError(t, err)
			require.Equal(t, vec.clear, string(got))
		})
	}
}

func TestVectorsExtractResourceID(t *testing.T) {
	t.Parallel()
	for _, vec := range vectors {
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			enc := mustHex(t, vec.encrypted)
			v, rid, err := ExtractResourceID(enc)
			require.NoError(t, err)
			require.Equal(t, Version(enc[0]), v)
			require.Equal(t, vec.resourceID, hex.EncodeToString(rid.Bytes()))
			require.Equal(t, v.IsTransparentSession(), rid.Composite)
			parsed, err := ParseResourceID(rid.Bytes())
			require.NoError(t, err)
			require.Equal(t, rid, parsed)
		})
	}
}

// A key shared for a single resource of a transparent session is published
// under the seed, holding the derived subkey itself.
func TestVectorsDecryptWithKeyUnderSeed(t *testing.T) {
	t.Parallel()
	for _, vec := range vectors {
		enc := mustHex(t, vec.encrypted)
		if !Version(enc[0]).IsTransparentSession() {
			continue
		}
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			_, rid, err := ExtractResourceID(enc)
			require.NoError(t, err)
			sub, err := DeriveSubkey(mustHex(t, vec.key), rid.Seed)
			require.NoError(t, err)

			var asked []SimpleID
			finder := KeyFinderFunc(func(id SimpleID) ([]byte, error) {
				asked = append(asked, id)
				if id == rid.Seed {
					return sub, nil
				}
				return nil, ErrKeyNotFound
			})
			got, _, err := Decrypt(finder, enc)
			require.NoError(t, err)
			require.Equal(t, vec.clear, string(got))
			require.Equal(t, []SimpleID{rid.ID, rid.Seed}, asked, "session ID must be looked up first")
		})
	}
}

func TestVectorsReencrypt(t *testing.T) {
	t.Parallel()
	for _, vec := range vectors {
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			enc := mustHex(t, vec.encrypted)
			opts, ok := vectorRandom(t, vec)
			if !ok {
				t.Skip("format 1 is decrypt only")
			}
			got, rid, err := Encrypt(Version(enc[0]), mustHex(t, vec.key), []byte(vec.clear), opts)
			require.NoError(t, err)
			require.Equal(t, vec.encrypted, hex.EncodeToString(got))
			require.Equal(t, vec.resourceID, hex.EncodeToString(rid.Bytes()))
		})
	}
}

func TestVectorsEncryptedSize(t *testing.T) {
	t.Parallel()
	for _, vec := range vectors {
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			enc := mustHex(t, vec.encrypted)
			opts, _ := vectorRandom(t, vec)
			size, err := EncryptedSize(Version(enc[0]), uint64(len(vec.clear)), opts)
			require.NoError(t, err)
			require.Equal(t, uint64(len(enc)), size)
		})
	}
}

func TestDerivedValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		sessionKey string
		seed       string
		subkey     string
	}{
		{"v9", "1889a4b6660c144e3aef2946cb6e10f326f5f9484c999549967f48b0cc68e5a3", "950659029c534fec2340607720ee075c", "df5046ee1e30ecbd7d3472577131f2847a1be022c6614c714d0252533fd086b7"},
		{"v10", "6fc5d1e4183dfa71710c54b098129574aeae2513d39fc3dd180593b25aa477f7", "0aaab7e32e700685c992ff0a03218678", "50d2648fcd95ff9f6ed1196257a20704b7890589b117597844dab285cffd85e0"},
		{"v11", "41d50524565e37553e5ae8fa667727c4ad44a01047ebc3666ab24f3f1b915491", "f271f5a70d8de81d160959bb54606182", "ca596ee3c46f0aea40221711835e9cfc1cc574d1ce5aff23c05d07283565a43c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var seed SimpleID
			copy(seed[:], mustHex(t, tc.seed))
			sub, err := DeriveSubkey(mustHex(t, tc.sessionKey), seed)
			require.NoError(t, err)
			require.Equal(t, tc.subkey, hex.EncodeToString(sub))
		})
	}
	t.Run("chunk IV", func(t *testing.T) {
		t.Parallel()
		seed := make([]byte, ivSize)
		copy(seed, mustHex(t, "d2566dbbf50af5d12385a0edf622726f"))
		iv := DeriveIV(seed, 0)
		require.Equal(t, "5a5e73ed0d8dfdca39c9bd97a72ce000fb00b3987f044eb6", hex.EncodeToString(iv[:]))
	})
	t.Run("deriveIV index 1024", func(t *testing.T) {
		t.Parallel()
		iv := DeriveIV([]byte("12345678123456781234567812345678"), 1024)
		require.Equal(t, "65b43ad10fdfb2372ed7efe254ba5980c59210790de01af1", hex.EncodeToString(iv[:]))
	})
}

// DecryptWithKey takes the key Encrypt takes: the resource key for formats
// 1 to 8 and the session key for 9 to 11 (the vectors' key column).
func TestVectorsDecryptWithKey(t *testing.T) {
	t.Parallel()
	for _, vec := range vectors {
		t.Run(vec.name, func(t *testing.T) {
			t.Parallel()
			got, err := DecryptWithKey(mustHex(t, vec.key), mustHex(t, vec.encrypted))
			require.NoError(t, err)
			require.Equal(t, vec.clear, string(got))
		})
	}
	t.Run("round trip of every format", func(t *testing.T) {
		t.Parallel()
		key := randomKey(t)
		for v := V2; v <= V11; v++ {
			enc, _, err := Encrypt(v, key, []byte("same key both ways"), EncryptOptions{})
			require.NoError(t, err)
			got, err := DecryptWithKey(key, enc)
			require.NoError(t, err, "%s", v)
			require.Equal(t, "same key both ways", string(got))
		}
	})
}
