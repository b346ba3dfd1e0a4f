package apptest

import (
	"io"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// EchoApp is a fiber app with one route, POST /echo, that answers the JSON body it gets: the
// baseline benchmarks measure beside idvault's routes, with the same driver, in the same run.
func EchoApp() *fiber.App {
	app := fiber.New(fiber.Config{DisableStartupMessage: true, Immutable: true})
	app.Post("/echo", func(c *fiber.Ctx) error {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(c.Body())
	})
	return app
}

// Serve runs app on a real listener at 127.0.0.1:0 until tb ends, and returns its base URL and
// an HTTP client that keeps connections alive (enough idle connections for parallel use).
func Serve(tb testing.TB, app *fiber.App) (string, *http.Client) {
	tb.Helper()
	return serveWith(tb, app.Listener, app.ShutdownWithTimeout)
}

// Server is a server with its own Serve and Shutdown, as the exit server has.
type Server interface {
	Serve(ln net.Listener) error
	Shutdown(timeout time.Duration) error
}

// ServeServer is Serve for a Server, served by its own Serve (as the binary serves it).
func ServeServer(tb testing.TB, s Server) (string, *http.Client) {
	tb.Helper()
	return serveWith(tb, s.Serve, s.Shutdown)
}

func serveWith(tb testing.TB, serve func(net.Listener) error, shutdown func(time.Duration) error) (string, *http.Client) {
	tb.Helper()
	addr := ServeLoopback(tb, serve, func() error { return shutdown(5 * time.Second) })
	tr := &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}
	tb.Cleanup(tr.CloseIdleConnections)
	return "http://" + addr, &http.Client{Transport: tr, Timeout: time.Minute}
}

// BenchHTTP sends requests made by next (i counts from 0 across all goroutines) from
// b.RunParallel goroutines (8 per GOMAXPROCS) through client, requires status want for each, and reports
// requests per second as the "req/s" metric.
func BenchHTTP(b *testing.B, client *http.Client, want int, next func(i int64) *http.Request) {
	b.Helper()
	var n atomic.Int64
	b.SetParallelism(8) // several clients per core keep the server busy while others wait
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Do(next(n.Add(1) - 1))
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want {
				b.Errorf("status %d, want %d", resp.StatusCode, want)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}
