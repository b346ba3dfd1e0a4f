package server

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/config"
)

// Connections that announce bodies of the whole limit and send one byte of them hold memory for
// what arrived, not for what was announced: fasthttp, unless told to stream bodies, allocates
// each Content-Length as soon as the headers are in (8 connections x 64 MiB = 512 MiB, for a few
// hundred bytes sent).
func TestAnnouncedBodiesDoNotReserveMemory(t *testing.T) {
	cfg := config.Default().Server
	cfg.BodyLimit = 64 << 20
	addr := serveTCP(t, cfg)
	const conns = 8
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range conns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
		_, err = fmt.Fprintf(c, "POST /identity HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\n"+
			"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n", cfg.BodyLimit)
		require.NoError(t, err)
		line, err := bufio.NewReader(c).ReadString('\n') // the server read the headers
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(line, "HTTP/1.1 100"), line)
		_, err = c.Write([]byte("{"))
		require.NoError(t, err)
	}
	grown := uint64(0)
	for range 20 { // the allocation follows the 100 Continue at once; give it a moment
		var now runtime.MemStats
		runtime.ReadMemStats(&now)
		grown = max(grown, now.TotalAlloc-before.TotalAlloc)
		if grown > conns*uint64(cfg.BodyLimit)/2 {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	require.Less(t, grown, uint64(cfg.BodyLimit), "the server allocated %d MiB for %d announced bodies", grown>>20, conns)
}

// A body is still refused over the limit, announced or chunked, and read whole under it.
func TestStreamedBodiesKeepTheLimit(t *testing.T) {
	t.Parallel()
	cfg := config.Default().Server
	cfg.BodyLimit = 1000
	addr := serveTCP(t, cfg)
	big := strings.Repeat("x", 1001)
	for name, req := range map[string]string{
		"announced": "POST /identity HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 1001\r\n\r\n" + big,
		"chunked":   "POST /identity HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n3e9\r\n" + big + "\r\n0\r\n\r\n",
		"chunks":    "POST /identity HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("64\r\n"+big[:100]+"\r\n", 11) + "0\r\n\r\n",
	} {
		got, closed := rawExchange(t, addr, req)
		require.True(t, closed, name)
		require.Contains(t, got, "HTTP/1.1 413", name)
		require.Contains(t, got, "the request body is too large", name)
	}
	// Under the limit, chunked, then a second request on the same connection: both answered.
	body := `{"email":"a@b.example"}`
	got, _ := rawExchange(t, addr, fmt.Sprintf("POST /identity HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n"+
		"Content-Type: application/json\r\n\r\n%x\r\n%s\r\n0\r\n\r\nGET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", len(body), body))
	require.Equal(t, 2, strings.Count(got, "HTTP/1.1 "), got)
	require.Contains(t, got, "this feature is not enabled") // the body was read and routed (fake auth is off here)
	require.Contains(t, got, `{"status":"ok"}`)
}
