package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/idvault/idvault/app/netguard"
)

// serveUntilDone serves app on ln until ctx is cancelled (then shuts down gracefully, letting
// in-flight requests finish within timeout through shutdown) or the listener fails. It tells
// the test harness the address once the server accepts connections.
func serveUntilDone(ctx context.Context, p *prog, serve func(net.Listener) error, ln net.Listener, log *slog.Logger,
	timeout time.Duration, shutdown func(time.Duration) error) error {
	errc := make(chan error, 1)
	go func() { errc <- serve(ln) }()
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

// fitConnections raises the process's open-file limit to its hard limit (logged) and returns
// the connection cap of key lowered, with a warning, to fit under it with room for the rest of
// the process.
func fitConnections(log *slog.Logger, key string, maxConns int) int {
	limit, err := netguard.RaiseFileLimit()
	if err != nil {
		log.Warn("open-file limit", "err", err)
		if limit == 0 {
			return maxConns
		}
	}
	fit := netguard.FitConns(maxConns, limit)
	log.Info("open-file limit", "limit", limit, key, fit)
	if fit < maxConns {
		log.Warn("connection cap lowered to fit under the open-file limit", key, maxConns, "lowered_to", fit, "file_limit", limit)
	}
	return fit
}
