package exitserver_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
	"github.com/idvault/idvault/exit/encryption"
)

// guarded is an exit server served as `idvault exit` serves it (Server.Serve: netguard's
// listener), on a loopback port, with one imported user.
type guarded struct {
	srv  *exitserver.Server
	db   *exitfake.DB
	addr string
	who  string
}

func newGuarded(t *testing.T, cfg exitserver.Config) *guarded {
	t.Helper()
	g := &guarded{db: exitfake.New()}
	g.srv = exitserver.New(g.db, cfg)
	g.addr = apptest.ServeLoopback(t, g.srv.Serve, func() error { return g.srv.Shutdown(5 * time.Second) })
	g.who = g.db.AddImportedUser()
	return g
}

// dial opens a raw connection; reads fail after 20 s (a bound for a broken test, never reached
// when the server behaves).
func (g *guarded) dial(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", g.addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	require.NoError(t, c.SetReadDeadline(time.Now().Add(20*time.Second)))
	return c
}

// closedByServer reports whether the server closed c (EOF or reset), reading anything it sent
// first; a read deadline of ours is not a close.
func closedByServer(c net.Conn) (bool, string) {
	got, err := io.ReadAll(c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false, string(got)
	}
	return true, string(got)
}

// postHead is the head of a POST of length bytes to path, with the header lines headers.
func postHead(path string, length int, headers ...string) string {
	extra := ""
	for _, h := range headers {
		extra += h + "\r\n"
	}
	return fmt.Sprintf("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Length: %d\r\n\r\n", path, extra, length)
}

// A client trickling header lines (slowloris) is dropped once header_timeout has gone by in
// total, though each line comes well within it.
func TestSlowHeadersAreDropped(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{HeaderTimeout: 300 * time.Millisecond})
	c := g.dial(t)
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	require.NoError(t, err)
	sent := 0
	for ; sent < 40; sent++ { // 40 lines, one every 100 ms: 4 s if never dropped
		if _, err := fmt.Fprintf(c, "X-Slow-%d: x\r\n", sent); err != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
		if sent == 20 {
			break
		}
	}
	closed, got := closedByServer(c)
	require.True(t, closed, "the server still holds a connection whose headers took %d lines", sent)
	require.True(t, got == "" || strings.HasPrefix(got, "HTTP/1.1 4"), "answer: %q", got)
}

// A connection that sends nothing (an HTTP client's spare one) is closed at header_timeout
// without an answer, which the client would read as an unsolicited response; one that started
// a request gets its 4xx.
func TestSpareConnectionsAreClosedSilently(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{HeaderTimeout: 300 * time.Millisecond})
	c := g.dial(t)
	closed, got := closedByServer(c)
	require.True(t, closed, "a silent connection is closed at header_timeout")
	require.Empty(t, got, "a connection that sent nothing gets no answer")
	c = g.dial(t)
	_, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\n")
	require.NoError(t, err)
	closed, got = closedByServer(c)
	require.True(t, closed)
	require.True(t, strings.HasPrefix(got, "HTTP/1.1 4"), "a started request gets its answer: %q", got)
}

// An upload that stops sending is dropped after body_idle_timeout, and its memory reservation
// is given back.
func TestStalledBodyIsDropped(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{BodyIdleTimeout: 300 * time.Millisecond, MaxBody: 1 << 20})
	c := g.dial(t)
	_, err := io.WriteString(c, postHead("/v1/decrypt", 1<<20))
	require.NoError(t, err)
	_, err = c.Write(append([]byte{byte(encryption.V3)}, bytes.Repeat([]byte{1}, 100<<10)...))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return g.srv.Memory().Reserved > 0 }, 10*time.Second, 10*time.Millisecond,
		"the upload reserves its body")
	closed, _ := closedByServer(c)
	require.True(t, closed, "a stalled upload is dropped")
	require.Eventually(t, func() bool { return g.srv.Memory().Reserved == 0 }, 10*time.Second, 10*time.Millisecond,
		"the dropped upload's memory is given back")
}

// A body that keeps moving is never cut, though it takes many times body_idle_timeout.
func TestSlowMovingStreamCompletes(t *testing.T) {
	t.Parallel()
	// The idle limit leaves room for a busy machine's pauses between pieces (a piece every 100 ms):
	// with 1 s, a run beside fuzzers on both cores once saw a pause longer than that.
	g := newGuarded(t, exitserver.Config{BodyIdleTimeout: 2 * time.Second, HeaderTimeout: 2 * time.Second})
	clear := randomBytes(100 << 10)
	enc, err := g.db.Encrypt(g.who, encryption.V11, clear, encryption.EncryptOptions{ChunkSize: 16 << 10})
	require.NoError(t, err)
	pr, pw := io.Pipe()
	go func() {
		// 50 pieces, one every 100 ms: 5 s, two and a half times the idle limit.
		step := len(enc)/50 + 1
		for i := 0; i < len(enc); i += step {
			if _, err := pw.Write(enc[i:min(i+step, len(enc))]); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		pw.Close()
	}()
	req, err := http.NewRequest("POST", "http://"+g.addr+"/v1/decrypt", pr)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	requireClear(t, resp, clear)
}

// requireClear reads resp whole and requires a 200 with clear as its body.
func requireClear(t *testing.T, resp *http.Response, clear []byte) {
	t.Helper()
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, 200, resp.StatusCode, "%s", got)
	require.Equal(t, clear, got)
}

// A simple-format upload slower than the key lookup timeout still decrypts: the lookup's
// deadline starts once the body is read.
func TestSlowSimpleUploadDecrypts(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{KeyLookupTimeout: 200 * time.Millisecond})
	clear := randomBytes(64 << 10)
	enc, err := g.db.Encrypt(g.who, encryption.V3, clear, encryption.EncryptOptions{})
	require.NoError(t, err)
	c := g.dial(t)
	_, err = io.WriteString(c, postHead("/v1/decrypt", len(enc)))
	require.NoError(t, err)
	step := len(enc)/8 + 1
	for i := 0; i < len(enc); i += step { // 8 pieces, 100 ms apart: four times the timeout
		_, err := c.Write(enc[i:min(i+step, len(enc))])
		require.NoError(t, err)
		time.Sleep(100 * time.Millisecond)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	requireClear(t, resp, clear)
}

// Uploads that together go over memory_budget: those that fit hold their reservation, a later
// one waits, then gets 503 server_busy with Retry-After; the reserved bytes never exceed the
// budget, and all come back once the uploads end.
func TestMemoryBudgetRefusesWhatDoesNotFit(t *testing.T) {
	t.Parallel()
	const budget, body = 1 << 20, 200 << 10 // each upload reserves 400 KiB: two fit
	g := newGuarded(t, exitserver.Config{MemoryBudget: budget, MaxBody: 256 << 10, BodyIdleTimeout: 20 * time.Second})
	var stalled []net.Conn
	for range 2 {
		c := g.dial(t)
		_, err := io.WriteString(c, postHead("/v1/decrypt", body))
		require.NoError(t, err)
		_, err = c.Write(append([]byte{byte(encryption.V3)}, make([]byte, 16<<10)...)) // a part of the body, then nothing
		require.NoError(t, err)
		stalled = append(stalled, c)
	}
	require.Eventually(t, func() bool { return g.srv.Memory().Reserved == 2*2*body }, 10*time.Second, 10*time.Millisecond)

	// A third upload, sent whole, does not fit.
	enc, err := g.db.Encrypt(g.who, encryption.V3, randomBytes(body-64), encryption.EncryptOptions{})
	require.NoError(t, err)
	req, err := http.NewRequest("POST", "http://"+g.addr+"/v1/decrypt", bytes.NewReader(enc))
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	requireError(t, resp.StatusCode, raw, 503, "server_busy")
	require.Equal(t, "1", resp.Header.Get("Retry-After"))
	require.LessOrEqual(t, g.srv.Memory().Peak, int64(budget))

	for _, c := range stalled {
		c.Close()
	}
	require.Eventually(t, func() bool { return g.srv.Memory().Reserved == 0 }, 10*time.Second, 10*time.Millisecond)
	// Room again: the same upload now decrypts.
	resp, err = http.Post("http://"+g.addr+"/v1/decrypt", "application/octet-stream", bytes.NewReader(enc))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.LessOrEqual(t, g.srv.Memory().Peak, int64(budget))
}

// The exit server answers 421 to a foreign Host on a loopback listener (DNS rebinding), and
// what exit.allowed_hosts lists.
func TestExitHostCheck(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		cfg  exitserver.Config
		host string
		want int
	}{
		"foreign host on loopback": {exitserver.Config{Listen: "127.0.0.1:8000"}, "attacker.example", 421},
		"loopback name":            {exitserver.Config{Listen: "127.0.0.1:8000"}, "localhost:8000", 200},
		"allowed host":             {exitserver.Config{Listen: "127.0.0.1:8000", AllowedHosts: []string{"exit.example"}}, "exit.example", 200},
		"not in allowed hosts":     {exitserver.Config{Listen: "127.0.0.1:8000", AllowedHosts: []string{"exit.example"}}, "localhost", 421},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, tc.cfg)
			req, err := http.NewRequest("GET", f.url+"/healthz", nil)
			require.NoError(t, err)
			req.Host = tc.host
			resp, err := f.client.Do(req)
			require.NoError(t, err)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.want == 421 {
				e := requireError(t, resp.StatusCode, raw, 421, "host_not_allowed")
				require.Contains(t, e.Error.Message, "exit.allowed_hosts")
				return
			}
			require.Equal(t, tc.want, resp.StatusCode, "%s", raw)
		})
	}
}

// Ambiguous framing gets 400 malformed_request and a closed connection, over raw TCP.
func TestExitRefusesAmbiguousFraming(t *testing.T) {
	t.Parallel()
	g := newGuarded(t, exitserver.Config{})
	for name, req := range framingAttacks {
		t.Run(name, func(t *testing.T) {
			c := g.dial(t)
			_, err := io.WriteString(c, req)
			require.NoError(t, err)
			closed, got := closedByServer(c)
			require.True(t, closed, "the connection is closed after the answer")
			require.True(t, strings.HasPrefix(got, "HTTP/1.1 400"), "answer: %q", got)
			require.Contains(t, got, `"code":"malformed_request"`)
		})
	}
}

// framingAttacks are requests whose framing a proxy could read differently.
var framingAttacks = map[string]string{
	"content-length and transfer-encoding": "POST /v1/decrypt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n" +
		"Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"transfer-encoding then content-length": "POST /v1/decrypt HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n" +
		"Content-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
	"foreign host first":  "GET /healthz HTTP/1.1\r\nHost: attacker.example\r\nHost: 127.0.0.1\r\n\r\n",
	"foreign host second": "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\n\r\n",
	"two content-lengths": "POST /v1/decrypt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
}
