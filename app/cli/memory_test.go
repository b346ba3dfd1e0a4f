package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/encryption"
)

// The key and session ID of the streams of the memory attack, published in the child's database.
var (
	attackKey       = bytes.Repeat([]byte{9}, 32)
	attackSessionID = encryption.SimpleID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
)

// rssKiB reads a /proc/<pid>/status field (VmRSS, VmHWM) in KiB.
func rssKiB(t *testing.T, pid int, field string) int {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, err := strconv.Atoi(strings.Fields(v)[0])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// A flood of stalled uploads on `idvault exit` with its default limits: 24 connections each
// announcing a 64 MiB simple-format body, sending 60 MiB and stopping, and 60 streams declaring
// 16 MiB chunks, each sending 15 MiB of its first chunk and stopping (without the memory budget
// the server would hold all of it, over 2 GB). The process's peak resident memory stays under
// 512 MiB, and it still answers afterwards.
func TestExitMemoryUnderAttack(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 2.3 GB over loopback")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read the server's memory")
	}
	// GOMEMLIMIT unset: the server's own soft limit applies.
	child := startFloodChild(t, "exit-memory", slicesWithout(os.Environ(), "GOMEMLIMIT="))
	addr := child.addr
	pid := child.cmd.Process.Pid
	idle := rssKiB(t, pid, "VmRSS")

	enc, _, err := encryption.Encrypt(encryption.V11, attackKey, make([]byte, 1024),
		encryption.EncryptOptions{ChunkSize: 16 << 20, SessionID: &attackSessionID})
	require.NoError(t, err)
	streamHead := enc[:100] // the stream header and the start of its first chunk
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	attack := func(head string, body []byte, zeros int) {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second))
			if _, err := io.WriteString(c, head); err != nil {
				return
			}
			if _, err := c.Write(body); err != nil {
				return
			}
			_, _ = io.CopyN(c, zeroReader{}, int64(zeros))
		}()
	}
	for range 24 {
		attack("POST /v1/decrypt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 67108864\r\n\r\n",
			[]byte{byte(encryption.V3)}, 60<<20-1)
	}
	for range 60 {
		attack("POST /v1/decrypt HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1073741824\r\n\r\n",
			streamHead, 15<<20)
	}
	sent := make(chan struct{})
	go func() { wg.Wait(); close(sent) }()
	peak := 0
	for i := 0; i < 300; i++ { // every 100 ms until the senders are done, 30 s at most
		peak = max(peak, rssKiB(t, pid, "VmRSS"))
		select {
		case <-sent:
			i = 300
		case <-time.After(100 * time.Millisecond):
		}
	}
	time.Sleep(500 * time.Millisecond) // the last buffers filled
	hwm := rssKiB(t, pid, "VmHWM")
	t.Logf("exit server resident memory: %d MiB idle, %d MiB peak under the attack (VmHWM %d MiB)", idle>>10, peak>>10, hwm>>10)
	bound := 512 << 10
	if raceEnabled {
		bound *= 2
	}
	require.Less(t, hwm, bound, "peak resident memory under 512 MiB (twice that under the race detector)")

	for _, c := range conns {
		c.Close()
	}
	resp, err := (&http.Client{Timeout: 20 * time.Second}).Get("http://" + addr + "/healthz")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.NoError(t, child.cmd.Process.Signal(syscall.SIGTERM))
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

func slicesWithout(env []string, prefix string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, prefix) {
			out = append(out, kv)
		}
	}
	return out
}
