package exitserver_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

const chunk = 16 << 10 // encrypted chunk size of the streams below

// streamFixture is a server with one imported user and a v11 session key published for it.
func streamFixture(t *testing.T) (*fixture, []byte, encryption.SimpleID) {
	t.Helper()
	f := newFixture(t, exitserver.Config{})
	who, _ := f.db.AddUser()
	status, raw, _ := f.do(t, "PUT", "/v1/identities", "", importBody(who))
	require.Equal(t, 201, status, "%s", raw)
	key, sid := publishSession(f.db, who)
	return f, key, sid
}

// publishSession publishes a random v11 session key for who and returns it with its session ID.
func publishSession(db *exitfake.DB, who string) ([]byte, encryption.SimpleID) {
	key := randomBytes(32)
	var sid encryption.SimpleID
	copy(sid[:], randomBytes(16))
	db.Publish(who, sid, key)
	return key, sid
}

// stream returns n random chunks of clear text and their format 11 stream, under a session key
// published for g.who.
func (g *guarded) stream(t *testing.T, n int) (clear, enc []byte) {
	t.Helper()
	key, sid := publishSession(g.db, g.who)
	clear = randomBytes(n * chunk)
	enc, _, err := encryption.Encrypt(encryption.V11, key, clear, encryption.EncryptOptions{ChunkSize: chunk, SessionID: &sid})
	require.NoError(t, err)
	return clear, enc
}

// A stream that fails midway drops the connection: the client gets an error, never a clean
// end, and only clear bytes of chunks before the bad one.
func TestDecryptStreamFailingMidwayAborts(t *testing.T) {
	t.Parallel()
	f, key, sid := streamFixture(t)
	clear := randomBytes(40 * chunk)
	enc, _, err := encryption.Encrypt(encryption.V11, key, clear, encryption.EncryptOptions{ChunkSize: chunk, SessionID: &sid})
	require.NoError(t, err)

	cases := map[string][]byte{
		"tampered chunk": func() []byte { b := bytes.Clone(enc); b[len(b)/2] ^= 1; return b }(),
		"cut short":      enc[:len(enc)/2],
	}
	for name, body := range cases {
		resp, err := f.client.Post(f.url+"/v1/decrypt", "application/octet-stream", bytes.NewReader(body))
		if err != nil {
			// The connection was dropped while the client was still sending the rest of the
			// body (a loaded machine): a broken transfer too, never a clean end.
			require.ErrorContains(t, err, "reset", name)
			continue
		}
		require.Equal(t, 200, resp.StatusCode, name)
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Error(t, err, "%s: the client must see a broken transfer, not an end", name)
		require.Less(t, len(got), len(enc)/2, name)
		require.True(t, bytes.Equal(clear[:len(got)], got), "%s: only verified clear bytes", name)
	}
	// The server keeps serving afterwards.
	status, got, _ := f.do(t, "POST", "/v1/decrypt", "", bytes.NewReader(enc))
	require.Equal(t, 200, status)
	require.True(t, bytes.Equal(clear, got))

	// A stream that fails in its first chunks still gets its error code.
	bad := bytes.Clone(enc)
	bad[100] ^= 1
	status, raw, _ := f.do(t, "POST", "/v1/decrypt", "", bytes.NewReader(bad))
	requireError(t, status, raw, 422, "decryption_failed")
	status, raw, _ = f.do(t, "POST", "/v1/decrypt", "", bytes.NewReader(enc[:chunk+100]))
	requireError(t, status, raw, 422, "decryption_failed")
}

// Clear bytes come out while the ciphertext is still going in: neither side is buffered whole.
func TestDecryptStreamsBothWays(t *testing.T) {
	t.Parallel()
	f, key, sid := streamFixture(t)
	clear := randomBytes(20 * chunk)
	enc, _, err := encryption.Encrypt(encryption.V11, key, clear, encryption.EncryptOptions{ChunkSize: chunk, SessionID: &sid})
	require.NoError(t, err)

	pr, pw := io.Pipe()
	firstBytes := make(chan struct{})
	go func() {
		_, _ = pw.Write(enc[:4*chunk]) // header and a few chunks
		select {
		case <-firstBytes:
			_, _ = pw.Write(enc[4*chunk:])
			_ = pw.Close()
		case <-time.After(20 * time.Second):
			_ = pw.CloseWithError(io.ErrClosedPipe)
		}
	}()
	req, err := http.NewRequest("POST", f.url+"/v1/decrypt", pr)
	require.NoError(t, err)
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	head := make([]byte, 1000)
	_, err = io.ReadFull(resp.Body, head)
	require.NoError(t, err, "clear bytes arrive before the upload ends")
	close(firstBytes)
	rest, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.True(t, bytes.Equal(clear, append(head, rest...)))
}

// Streaming 64 MiB through the server keeps the heap small: the body is never held whole.
// Not parallel: it samples the whole process's heap.
func TestDecryptStreamConstantMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("streams 64 MiB")
	}
	f, key, sid := streamFixture(t)
	const size = 64 << 20
	src := rand.NewChaCha8([32]byte{7})
	wantHash := sha256.New()
	pr, pw := io.Pipe()
	go func() {
		w, err := encryption.NewEncryptWriter(pw, encryption.V11, key, encryption.EncryptOptions{SessionID: &sid})
		if err != nil {
			_ = pw.CloseWithError(err)
			return
		}
		if _, err := io.Copy(w, io.TeeReader(io.LimitReader(src, size), wantHash)); err != nil {
			_ = pw.CloseWithError(err)
			return
		}
		_ = pw.CloseWithError(w.Close())
	}()

	var peak atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	runtime.GC()
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	resp, err := f.client.Post(f.url+"/v1/decrypt", "application/octet-stream", pr)
	require.NoError(t, err)
	gotHash := sha256.New()
	n, err := io.Copy(gotHash, resp.Body)
	resp.Body.Close()
	close(stop)
	<-sampled
	require.NoError(t, err)
	require.Equal(t, int64(size), n)
	require.Equal(t, wantHash.Sum(nil), gotHash.Sum(nil))
	t.Logf("peak heap in use while streaming 64 MiB: %.1f MiB", float64(peak.Load())/(1<<20))
	require.Less(t, peak.Load(), uint64(24<<20), "the server must not hold the stream in memory")
}

// stallingBody sends data, then neither sends more nor ends, until released.
type stallingBody struct {
	data    io.Reader
	release chan struct{}
}

func (b *stallingBody) Read(p []byte) (int, error) {
	n, err := b.data.Read(p)
	if err == io.EOF {
		<-b.release
	}
	return n, err
}

// A client that sent a bad chunk and then stalls (the body not finished, the connection open) is
// dropped at once: the read the server had waiting for the next chunk is cut, rather than left to
// the 5-minute idle timeout.
func TestDecryptStreamFailureCutsStalledClient(t *testing.T) {
	t.Parallel()
	f, key, sid := streamFixture(t)
	clear := randomBytes(40 * chunk)
	enc, _, err := encryption.Encrypt(encryption.V11, key, clear, encryption.EncryptOptions{ChunkSize: chunk, SessionID: &sid})
	require.NoError(t, err)
	const header = 1 + 2*16 + 4 // format 11's stream header
	bad := (len(enc)/2 - header) / chunk
	enc[header+bad*chunk+100] ^= 1
	// Everything up to the end of the bad chunk, so that the server then waits for the next one.
	body := &stallingBody{data: bytes.NewReader(enc[:header+(bad+1)*chunk]), release: make(chan struct{})}
	defer close(body.release)
	req, err := http.NewRequest(http.MethodPost, f.url+"/v1/decrypt", body)
	require.NoError(t, err)
	req.ContentLength = int64(len(enc))
	start := time.Now()
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode)
	_, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Error(t, err, "the client must see a broken transfer")
	// The server's stream ends (and logs its failure) without waiting for the stalled client.
	require.Eventually(t, func() bool { return strings.Contains(f.logText(), "failed midway") },
		10*time.Second, 10*time.Millisecond, "the stream still waits for the stalled client")
	require.Less(t, time.Since(start), 10*time.Second)
}

// postStream sends a stream decrypt on c, with the header lines headers, and reads its answer
// to the end.
func postStream(t *testing.T, c net.Conn, br *bufio.Reader, enc []byte, headers ...string) (*http.Response, []byte) {
	t.Helper()
	_, err := io.WriteString(c, postHead("/v1/decrypt", len(enc), headers...))
	require.NoError(t, err)
	_, err = c.Write(enc)
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, got
}

// A client decrypting streams one after another keeps its connection: after a stream that
// ended well, the same connection serves the next request (a stream, a simple request), and
// one then left idle is closed at header_timeout without an answer (which a client would read
// as unsolicited), like a spare connection.
func TestDecryptStreamsKeepTheConnection(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{HeaderTimeout: 300 * time.Millisecond})
	clear, enc := g.stream(t, 20)

	c := g.dial(t)
	br := bufio.NewReader(c)
	for i := range 3 {
		resp, got := postStream(t, c, br, enc)
		require.Equal(t, 200, resp.StatusCode, "stream %d", i)
		require.False(t, resp.Close, "stream %d: the answer keeps the connection", i)
		require.True(t, bytes.Equal(clear, got), "stream %d", i)
	}
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
	require.NoError(t, err)
	resp, err := http.ReadResponse(br, nil)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	require.Equal(t, 200, resp.StatusCode, "the kept connection serves other requests")
	// Left idle after a stream: closed without an answer.
	_, got := postStream(t, c, br, enc)
	require.True(t, bytes.Equal(clear, got))
	closed, rest := closedByServer(c)
	require.True(t, closed, "an idle kept connection is closed at header_timeout")
	require.Empty(t, rest, "an idle kept connection gets no answer")

	// A client that asks for it (Connection: close) has its connection closed after the stream.
	c = g.dial(t)
	resp, got = postStream(t, c, bufio.NewReader(c), enc, "Connection: close")
	require.True(t, resp.Close)
	require.True(t, bytes.Equal(clear, got))
	closed, _ = closedByServer(c)
	require.True(t, closed)
}

// Shutdown does not wait for a connection kept after a stream to send its next request: it is
// closed without an answer, and Shutdown returns within its time.
func TestShutdownClosesKeptConnections(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{}) // header_timeout 30 s: longer than Shutdown's time
	clear, enc := g.stream(t, 10)
	c := g.dial(t)
	resp, got := postStream(t, c, bufio.NewReader(c), enc)
	require.False(t, resp.Close)
	require.True(t, bytes.Equal(clear, got))
	require.NoError(t, g.srv.Shutdown(10*time.Second), "Shutdown waited for the kept connection")
	closed, rest := closedByServer(c)
	require.True(t, closed)
	require.Empty(t, rest)
}
