package loadgen

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/stretchr/testify/require"
	"github.com/valyala/fasthttp"
)

func TestRunRefusesNonLoopbackAddresses(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"192.0.2.1:80", "example.com:80", "0.0.0.0:80", "nohost"} {
		_, err := Run(context.Background(), Config{Addr: addr, Clients: 1, Duration: time.Second, Next: func(int64, *fasthttp.Request) {}})
		require.Error(t, err, addr)
	}
}

// Run sends numbered requests until its bound, counts answers by status, and keeps each
// client's connection alive (one connection per client).
func TestRunCountsAnswersAndKeepsConnectionsAlive(t *testing.T) {
	t.Parallel()
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	var seen atomic.Int64
	app.Get("/n", func(c *fiber.Ctx) error {
		seen.Add(1)
		if c.QueryInt("i")%10 == 9 {
			return c.SendStatus(fiber.StatusTeapot)
		}
		return c.SendString("ok")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var conns atomic.Int64
	go func() { _ = app.Listener(countingListener{ln, &conns}) }()
	t.Cleanup(func() { _ = app.Shutdown() })

	res, err := Run(context.Background(), Config{
		Addr: ln.Addr().String(), Clients: 4, Duration: 30 * time.Second, MaxRequests: 200, Want: fiber.StatusOK,
		Next: func(i int64, req *fasthttp.Request) { req.SetRequestURI("/n?i=" + itoa(i)) },
	})
	require.NoError(t, err)
	require.Equal(t, int64(180), res.Requests)
	require.Equal(t, int64(20), res.Errors)
	require.Contains(t, res.FirstError, "status 418")
	require.Equal(t, int64(200), seen.Load())
	require.LessOrEqual(t, conns.Load(), int64(4), "keep-alive: at most one connection per client")
	require.Positive(t, res.PerSecond())
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func itoa(i int64) string { return string(fasthttp.AppendUint(nil, int(i))) }
