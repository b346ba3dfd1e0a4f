package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/gofiber/fiber/v2"
)

// serveUntilDone serves app on ln until ctx is cancelled (then shuts down gracefully, letting
// in-flight requests finish within timeout through shutdown) or the listener fails. It tells
// the test harness the address once the server accepts connections.
func serveUntilDone(ctx context.Context, p *prog, app *fiber.App, ln net.Listener, log *slog.Logger,
	timeout time.Duration, shutdown func(time.Duration) error) error {
	errc := make(chan error, 1)
	go func() { errc <- app.Listener(ln) }()
	if p.env.Ready != nil {
		p.env.Ready(ln.Addr().String())
	}
	select {
	case err := <-errc:
		return fmt.Errorf("server: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down: finishing in-flight requests", "timeout", timeout.String())
	if err := shutdown(timeout); err != nil {
		log.Error("shutdown", "err", err)
	}
	return nil
}
