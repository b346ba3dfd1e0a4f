// Package loadgen is a small HTTP load generator for idvault's benchmarks: a fixed number of
// concurrent keep-alive clients send requests to one loopback address as fast as the server
// answers, for a bounded time and a bounded number of requests, and the result is requests per
// second. It uses fasthttp's client (already a dependency of fiber), which costs the shared CPU
// far less per request than net/http, so that more of the machine measures the server.
//
// It is a benchmark tool, not a test fixture: Run refuses any address that is not loopback.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Request fills req for the i-th request of a run (i counts from 0 across all clients).
type Request func(i int64, req *fasthttp.Request)

// Config is one run.
type Config struct {
	// Addr is the server's host:port; it must be a loopback address.
	Addr string
	// Clients is the number of concurrent clients, each with its own keep-alive connection.
	Clients int
	// Duration bounds the run's time; MaxRequests bounds its count (0: no bound but time).
	Duration    time.Duration
	MaxRequests int64
	// Want is the status every answer must have; another status counts as an error.
	Want int
	// Next fills each request.
	Next Request
}

// Result is what a run measured.
type Result struct {
	Requests int64         // answered with the wanted status
	Errors   int64         // transport errors and unexpected statuses
	Elapsed  time.Duration // from the first request to the last answer
	// FirstError describes the first error, "" when there was none.
	FirstError string
}

// PerSecond is the rate of answered requests.
func (r Result) PerSecond() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Requests) / r.Elapsed.Seconds()
}

// Run sends requests until Duration has passed, MaxRequests were sent, or ctx ends.
func Run(ctx context.Context, c Config) (Result, error) {
	if err := checkLoopback(c.Addr); err != nil {
		return Result{}, err
	}
	if c.Clients <= 0 || c.Duration <= 0 || c.Next == nil {
		return Result{}, errors.New("loadgen: Clients, Duration and Next are required")
	}
	client := &fasthttp.HostClient{
		Addr: c.Addr, MaxConns: c.Clients,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second,
		MaxIdleConnDuration: time.Minute,
		// Large buffers: a 35 KB answer is read in one or two system calls rather than nine,
		// so the client's share of the shared CPU stays small.
		ReadBufferSize: 64 << 10, WriteBufferSize: 16 << 10,
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, c.Duration)
	defer cancel()

	var (
		next, ok, bad atomic.Int64
		firstErr      sync.Once
		first         string
		wg            sync.WaitGroup
	)
	start := time.Now()
	for range c.Clients {
		wg.Go(func() {
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if c.MaxRequests > 0 && i >= c.MaxRequests {
					return
				}
				req.Reset()
				c.Next(i, req)
				req.Header.SetHost(c.Addr)
				err := client.Do(req, resp)
				switch {
				case err != nil:
					bad.Add(1)
					firstErr.Do(func() { first = err.Error() })
				case resp.StatusCode() != c.Want:
					bad.Add(1)
					firstErr.Do(func() { first = fmt.Sprintf("status %d: %.200s", resp.StatusCode(), resp.Body()) })
				default:
					ok.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return Result{Requests: ok.Load(), Errors: bad.Load(), Elapsed: time.Since(start), FirstError: first}, nil
}

// checkLoopback refuses any address that is not a loopback IP: the generator is meant to
// measure a local server, never to load someone else's.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("loadgen: address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("loadgen: %q is not a loopback IP address", addr)
	}
	return nil
}
