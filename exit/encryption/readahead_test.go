package encryption

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"testing"
	"testing/iotest"
	"time"

	"github.com/stretchr/testify/require"
)

// blockingSource serves data, then blocks on the next Read until interrupted
// (like a connection whose client stopped sending), and records reads made
// after the decrypter said it was done with it.
type blockingSource struct {
	data      io.Reader
	cut       chan struct{}
	once      sync.Once
	returned  atomic.Bool // WriteTo returned: any Read now is a bug
	lateReads atomic.Int32
	waiting   atomic.Bool // a Read got to the end of data and waits for the interrupt
}

func newBlockingSource(data []byte) *blockingSource {
	return &blockingSource{data: bytes.NewReader(data), cut: make(chan struct{})}
}

func (s *blockingSource) Read(p []byte) (int, error) {
	if s.returned.Load() {
		s.lateReads.Add(1)
	}
	n, err := s.data.Read(p)
	if err == io.EOF {
		s.waiting.Store(true)
		<-s.cut
		return 0, errors.New("read interrupted")
	}
	return n, err
}

func (s *blockingSource) interrupt() { s.once.Do(func() { close(s.cut) }) }

// recordWriter keeps what it is given and can fail after a number of writes.
type recordWriter struct {
	buf      bytes.Buffer
	writes   int
	failFrom int // 0: never
}

func (w *recordWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.failFrom > 0 && w.writes >= w.failFrom {
		return 0, errors.New("client went away")
	}
	return w.buf.Write(p)
}

func TestReadAheadRoundTrip(t *testing.T) {
	t.Parallel()
	for _, v := range []Version{V4, V8, V11} {
		for _, size := range []int{0, 100, 5000, 3 * 4096, 50000} {
			t.Run(fmt.Sprintf("%s/%d bytes", v, size), func(t *testing.T) {
				key := randomKey(t)
				clear := bytes.Repeat([]byte("read ahead "), size/11+1)[:size]
				enc, rid, err := Encrypt(v, key, clear, EncryptOptions{ChunkSize: 4096})
				require.NoError(t, err)
				for name, src := range map[string]io.Reader{
					"reader":    iotest.HalfReader(bytes.NewReader(enc)),
					"one byte":  iotest.OneByteReader(bytes.NewReader(enc)),
					"data+EOF":  iotest.DataErrReader(bytes.NewReader(enc)),
					"after EOF": io.MultiReader(bytes.NewReader(enc), eofForever{}),
				} {
					interrupted := false
					r, err := NewDecryptReader(src, KeyMap{rid.ID: key}, WithReadAhead(func() { interrupted = true }))
					require.NoError(t, err, name)
					var out bytes.Buffer
					n, err := r.WriteTo(&out)
					require.NoError(t, err, name)
					require.Equal(t, int64(size), n, name)
					require.True(t, bytes.Equal(clear, out.Bytes()), name)
					require.False(t, interrupted, "%s: a whole stream needs no interrupt", name)
				}
			})
		}
	}
}

type eofForever struct{}

func (eofForever) Read([]byte) (int, error) { return 0, io.EOF }

// After Read took the first bytes (as the server does to verify the first
// chunk before answering), WriteTo goes on from there with read-ahead.
func TestReadAheadAfterRead(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	clear := bytes.Repeat([]byte{7, 1, 9}, 20000)
	enc, rid, err := Encrypt(V11, key, clear, EncryptOptions{ChunkSize: 4096})
	require.NoError(t, err)
	r, err := NewDecryptReader(bytes.NewReader(enc), KeyMap{rid.ID: key}, WithReadAhead(func() {}))
	require.NoError(t, err)
	first := make([]byte, 1000)
	_, err = io.ReadFull(r, first)
	require.NoError(t, err)
	var out bytes.Buffer
	_, err = r.WriteTo(&out)
	require.NoError(t, err)
	require.Equal(t, clear, append(first, out.Bytes()...))
}

// A tampered chunk midway: only whole verified chunks before it come out
// (those not yet written may be dropped: the stream failed), nothing of it
// or after it, the read waiting for more input is interrupted, and the
// source is not read once WriteTo returned.
func TestReadAheadStopsAtBadChunk(t *testing.T) {
	t.Parallel()
	for _, v := range []Version{V4, V8, V11} {
		t.Run(v.String(), func(t *testing.T) {
			key := randomKey(t)
			const chunk = 4096
			clear := bytes.Repeat([]byte("x"), 20*chunk)
			enc, rid, err := Encrypt(v, key, clear, EncryptOptions{ChunkSize: chunk, Padding: PaddingOff})
			require.NoError(t, err)
			header := 0
			if v == V11 {
				header = v11Header
			}
			bad := header + 5*chunk + 100 // inside chunk 5
			enc[bad] ^= 1
			src := newBlockingSource(enc[:len(enc)-10]) // and the client never sends the end
			r, err := NewDecryptReader(src, KeyMap{rid.ID: key}, WithReadAhead(src.interrupt))
			require.NoError(t, err)
			var out recordWriter
			_, err = r.WriteTo(&out)
			src.returned.Store(true)
			require.ErrorIs(t, err, ErrDecryptionFailed)
			per := chunk - chunkOverhead(v) // clear bytes per chunk
			require.LessOrEqual(t, out.buf.Len(), 5*per, "clear bytes of the bad chunk or later came out")
			require.Zero(t, out.buf.Len()%per, "a part of a chunk came out")
			require.Equal(t, clear[:out.buf.Len()], out.buf.Bytes())
			require.Zero(t, src.lateReads.Load(), "the source was read after WriteTo returned")
		})
	}
}

func chunkOverhead(v Version) int {
	switch v {
	case V4:
		return v48Header + tagSize
	case V8:
		return v48Header + tagSize + 1
	}
	return v11Chunk
}

// A stream cut short while the client waits: the decrypter reports the cut,
// not a clean end.
func TestReadAheadIncompleteStream(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	clear := bytes.Repeat([]byte("y"), 10000)
	enc, rid, err := Encrypt(V11, key, clear, EncryptOptions{ChunkSize: 4096, Padding: PaddingOff})
	require.NoError(t, err)
	cut := v11Header + 2*4096 // two whole chunks, no final one
	r, err := NewDecryptReader(bytes.NewReader(enc[:cut]), KeyMap{rid.ID: key}, WithReadAhead(func() {}))
	require.NoError(t, err)
	_, err = r.WriteTo(io.Discard)
	require.ErrorIs(t, err, ErrIncompleteStream)
}

// A failed write stops the stream: no write after it, the pending read is
// interrupted and the source is left alone once WriteTo returned.
func TestReadAheadWriteFailure(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	clear := bytes.Repeat([]byte("z"), 30*4096)
	enc, rid, err := Encrypt(V11, key, clear, EncryptOptions{ChunkSize: 4096})
	require.NoError(t, err)
	src := newBlockingSource(enc[:len(enc)-1])
	r, err := NewDecryptReader(src, KeyMap{rid.ID: key}, WithReadAhead(src.interrupt))
	require.NoError(t, err)
	out := &recordWriter{failFrom: 3}
	_, err = r.WriteTo(out)
	src.returned.Store(true)
	require.EqualError(t, err, "client went away")
	require.Equal(t, 3, out.writes, "a write after the failed one")
	require.Zero(t, src.lateReads.Load())
}

// With read-ahead a stream holds three chunk buffers, still nothing per chunk.
func TestReadAheadMemoryBounded(t *testing.T) {
	const total = 16 << 20
	key := randomKey(t)
	src, rid, err := newLazyStream(V11, key, total, EncryptOptions{Padding: PaddingOff})
	require.NoError(t, err)
	got := allocatedBy(func() {
		r, err := NewDecryptReader(src, KeyMap{rid.ID: key}, WithReadAhead(func() {}))
		require.NoError(t, err)
		n, err := r.WriteTo(io.Discard)
		require.NoError(t, err)
		require.Equal(t, int64(total), n)
	})
	// At most three 1 MiB chunk buffers, each grown by readAheadSteps (fewer when
	// earlier streams left some to reuse), the lazy encrypter's (about 2 MiB), and constant
	// overhead: nothing that grows with the stream.
	require.Less(t, got, uint64(5*DefaultChunkSize+streamOverhead), "allocated %d bytes for 16 MiB", got)
}

// A chunk buffer given back by one stream reaches the next one cleared: nothing of a stream's
// clear text can be read through another's buffer.
func TestReusedChunkBufferIsCleared(t *testing.T) {
	for range 8 {
		buf := make([]byte, DefaultChunkSize)
		for i := range buf {
			buf[i] = 0xa5
		}
		putChunkBuffer(buf)
		got := getChunkBuffer(DefaultChunkSize)
		require.Len(t, got, DefaultChunkSize)
		require.Equal(t, -1, bytes.IndexByte(got, 0xa5), "a reused chunk buffer holds an earlier stream's bytes")
	}
}

// onlyReader hides the io.WriterTo of a source: chunks then go through the read-ahead.
type onlyReader struct{ io.Reader }

// Read goes through the read-ahead too, and WriteTo carries on from where it stopped, in the
// middle of a chunk or at its end; reading to the end with Read alone works as well.
func TestReadAheadReadThenWriteTo(t *testing.T) {
	t.Parallel()
	for _, v := range []Version{V4, V8, V11} {
		t.Run(v.String(), func(t *testing.T) {
			key := randomKey(t)
			clear := bytes.Repeat([]byte{7, 1, 9, 4}, 9000)
			enc, rid, err := Encrypt(v, key, clear, EncryptOptions{ChunkSize: 4096})
			require.NoError(t, err)
			per := 4096 - chunkOverhead(v)
			for _, first := range []int{1, 1000, per, 3 * per, len(clear) - 1} {
				interrupted := false
				r, err := NewDecryptReader(onlyReader{iotest.HalfReader(bytes.NewReader(enc))}, KeyMap{rid.ID: key},
					WithReadAhead(func() { interrupted = true }))
				require.NoError(t, err)
				head := make([]byte, first)
				_, err = io.ReadFull(r, head)
				require.NoError(t, err)
				var out bytes.Buffer
				_, err = r.WriteTo(&out)
				require.NoError(t, err, "after %d bytes", first)
				require.Equal(t, clear, append(head, out.Bytes()...), "after %d bytes", first)
				require.NoError(t, r.Close())
				require.False(t, interrupted, "a whole stream needs no interrupt")
			}
			r, err := NewDecryptReader(onlyReader{bytes.NewReader(enc)}, KeyMap{rid.ID: key}, WithReadAhead(func() {}))
			require.NoError(t, err)
			got, err := io.ReadAll(r)
			require.NoError(t, err)
			require.Equal(t, clear, got)
		})
	}
}

// The read-ahead starts with the first Read: while the first chunk's clear text is being
// returned (a server verifying it before its answer), the next chunks are already read. Close
// then stops the reader waiting for more: it is interrupted, the source is not read after Close
// returned, and reads fail.
func TestReadAheadStartsWithFirstRead(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	clear := bytes.Repeat([]byte("q"), 10*4096)
	enc, rid, err := Encrypt(V11, key, clear, EncryptOptions{ChunkSize: 4096})
	require.NoError(t, err)
	src := newBlockingSource(enc[:v11Header+2*4096+100]) // two chunks and a bit, then the client waits
	r, err := NewDecryptReader(onlyReader{src}, KeyMap{rid.ID: key}, WithReadAhead(src.interrupt))
	require.NoError(t, err)
	head := make([]byte, 100)
	_, err = io.ReadFull(r, head)
	require.NoError(t, err)
	require.Eventually(t, src.waiting.Load, 10*time.Second, time.Millisecond,
		"the chunks after the first are not read until asked for")
	require.NoError(t, r.Close())
	src.returned.Store(true)
	select {
	case <-src.cut:
	default:
		t.Fatal("Close left the reader waiting for the source")
	}
	_, err = r.Read(head)
	require.Error(t, err, "a read after Close")
	require.Zero(t, src.lateReads.Load(), "the source was read after Close returned")
}

// A first chunk that fails through Read stops the read-ahead before Read returns: nothing of
// it comes out, the reader waiting for more is interrupted, and the source is left alone.
func TestReadAheadBadFirstChunkThroughRead(t *testing.T) {
	t.Parallel()
	key := randomKey(t)
	clear := bytes.Repeat([]byte("b"), 10*4096)
	enc, rid, err := Encrypt(V11, key, clear, EncryptOptions{ChunkSize: 4096})
	require.NoError(t, err)
	enc[v11Header+100] ^= 1
	src := newBlockingSource(enc[:v11Header+3*4096])
	r, err := NewDecryptReader(onlyReader{src}, KeyMap{rid.ID: key}, WithReadAhead(src.interrupt))
	require.NoError(t, err)
	n, err := r.Read(make([]byte, 100))
	src.returned.Store(true)
	require.ErrorIs(t, err, ErrDecryptionFailed)
	require.Zero(t, n)
	require.Zero(t, src.lateReads.Load(), "the source was read after Read returned")
	require.NoError(t, r.Close())
}
