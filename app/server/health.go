package server

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
)

// Checker is one readiness check (the store, the SMTP server).
type Checker interface {
	Check(ctx context.Context) error
}

// CheckFunc adapts a function to Checker.
type CheckFunc func(ctx context.Context) error

// Check runs f.
func (f CheckFunc) Check(ctx context.Context) error { return f(ctx) }

// causer is an error with a short cause that anyone may see ("connect refused", "tls failed"):
// /readyz needs no authentication, so it shows that and never the error's detail.
type causer interface{ Cause() string }

// Readiness timing: a check gets checkTimeout; results older than refreshAfter are refreshed in
// the background when /readyz is asked; the first /readyz waits at most firstWait for the
// first round.
const (
	checkTimeout = 5 * time.Second
	refreshAfter = 2 * time.Second
	firstWait    = time.Second
)

// readiness runs the checks in the background and keeps the last result of each, so /readyz
// answers at once whatever a check does (a hanging SMTP server delays neither start-up nor
// /readyz). A check still running on its first round shows as "checking".
type readiness struct {
	checks   map[string]Checker
	warnings []string
	log      *slog.Logger
	timeout  time.Duration

	mu      sync.Mutex
	results map[string]string
	at      time.Time
	running bool
	first   chan struct{} // closed when the first round is over
	created time.Time

	// stop cancels running checks and closed refuses new rounds (Close); rounds counts the
	// rounds in flight, which Close waits for.
	ctx    context.Context
	stop   context.CancelFunc
	closed bool
	rounds sync.WaitGroup
}

func newReadiness(checks map[string]Checker, warnings []string, log *slog.Logger) *readiness {
	r := &readiness{checks: checks, warnings: warnings, log: log, timeout: checkTimeout,
		results: map[string]string{}, first: make(chan struct{}), created: time.Now()}
	r.ctx, r.stop = context.WithCancel(context.Background())
	for name := range checks {
		r.results[name] = "checking"
	}
	r.refresh()
	return r
}

// refresh starts a round of checks unless one is running. Each check runs in its own goroutine
// and records its result as soon as it ends.
func (r *readiness) refresh() {
	r.mu.Lock()
	if r.running || r.closed {
		r.mu.Unlock()
		return
	}
	r.running = true
	r.rounds.Add(1)
	r.mu.Unlock()
	go func() {
		defer r.rounds.Done()
		var wg sync.WaitGroup
		for name, c := range r.checks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ctx, cancel := context.WithTimeout(r.ctx, r.timeout)
				err := c.Check(ctx)
				if err != nil && ctx.Err() != nil {
					err = errors.Join(errTimeout, err)
				}
				cancel()
				r.record(name, err)
			}()
		}
		wg.Wait()
		r.mu.Lock()
		r.running, r.at = false, time.Now()
		select {
		case <-r.first:
		default:
			close(r.first)
		}
		r.mu.Unlock()
	}()
}

var errTimeout = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string { return "check timed out" }
func (timeoutError) Cause() string { return "timeout" }

// record keeps a check's result; a change is logged, with the error's detail (never shown by
// /readyz).
func (r *readiness) record(name string, err error) {
	result := "ok"
	if err != nil {
		result = "failed"
		var c causer
		if errors.As(err, &c) {
			result = "failed: " + c.Cause()
		}
	}
	r.mu.Lock()
	before := r.results[name]
	r.results[name] = result
	closed := r.closed
	r.mu.Unlock()
	if before != result && r.log != nil && !closed {
		if err != nil {
			r.log.Warn("readiness check failed", "check", name, "result", result, "err", err)
		} else if before != "checking" {
			r.log.Info("readiness check recovered", "check", name)
		}
	}
}

// close cancels the checks in flight and waits for them: no check outlives the server (the
// store check would ping a closed store) and nothing is logged after its last line.
func (r *readiness) close() {
	r.mu.Lock()
	r.closed = true
	r.mu.Unlock()
	r.stop()
	r.rounds.Wait()
}

// snapshot returns the last results, refreshing them in the background when stale. Only a
// call within firstWait of start-up waits, at most until then, for the first round.
func (r *readiness) snapshot() (map[string]string, bool) {
	if wait := firstWait - time.Since(r.created); wait > 0 {
		t := time.NewTimer(wait)
		select {
		case <-r.first:
		case <-t.C:
		}
		t.Stop()
	}
	r.mu.Lock()
	stale := !r.running && time.Since(r.at) >= refreshAfter
	out, ready := make(map[string]string, len(r.results)), true
	for name, res := range r.results {
		out[name] = res
		if res != "ok" {
			ready = false
		}
	}
	r.mu.Unlock()
	if stale {
		r.refresh()
	}
	return out, ready
}

func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz answers 200 when every check passed its last run and 503 otherwise, with each check's
// short result and the warnings an operator must see (fake authentication on).
func (s *Server) readyz(c *fiber.Ctx) error {
	results, ready := s.ready.snapshot()
	status, word := fiber.StatusOK, "ready"
	if !ready {
		status, word = fiber.StatusServiceUnavailable, "not_ready"
	}
	warnings := s.ready.warnings
	if warnings == nil {
		warnings = []string{}
	}
	return c.Status(status).JSON(fiber.Map{"status": word, "checks": results, "warnings": warnings})
}
