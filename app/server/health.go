package server

import (
	"context"
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

// readiness runs the checks, caching each result briefly so that a busy probe does not open
// an SMTP connection per request.
type readiness struct {
	checks   map[string]Checker
	warnings []string
	ttl      time.Duration

	mu      sync.Mutex
	at      time.Time
	results map[string]string
	ready   bool
}

func (r *readiness) run(ctx context.Context) (map[string]string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.results != nil && time.Since(r.at) < r.ttl {
		return r.results, r.ready
	}
	results, ready := map[string]string{}, true
	for name, c := range r.checks {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := c.Check(cctx)
		cancel()
		if err != nil {
			// Check errors name the failing stage; they never carry secrets.
			results[name] = "failed: " + err.Error()
			ready = false
			continue
		}
		results[name] = "ok"
	}
	r.results, r.ready, r.at = results, ready, time.Now()
	return results, ready
}

func (s *Server) healthz(c *fiber.Ctx) error {
	return c.JSON(fiber.Map{"status": "ok"})
}

// readyz answers 200 when every check passes and 503 otherwise, with each check's result and
// the warnings an operator must see (fake authentication on).
func (s *Server) readyz(c *fiber.Ctx) error {
	results, ready := s.ready.run(c.UserContext())
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
