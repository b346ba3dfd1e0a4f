package encryption

import (
	"io"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// Streaming 64 MiB must not allocate per chunk: the decrypter keeps one
// chunk buffer. Not parallel: it measures allocations.
func TestStreamingMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	const total = 64 << 20
	key := randomKey(t)
	src, rid, err := newLazyStream(V11, key, total, EncryptOptions{Padding: PaddingOff})
	require.NoError(t, err)

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r, err := NewDecryptReader(src, KeyMap{rid.ID: key})
	require.NoError(t, err)
	n, err := io.Copy(io.Discard, r)
	require.NoError(t, err)
	require.Equal(t, int64(total), n)
	runtime.ReadMemStats(&after)

	// Decrypter (one 1 MiB chunk, grown once) plus the lazy encrypter and
	// its output buffer: a few MiB, far below one allocation per chunk.
	allocated := after.TotalAlloc - before.TotalAlloc
	require.Less(t, allocated, uint64(10<<20), "allocated %d bytes for a 64 MiB stream", allocated)
}
