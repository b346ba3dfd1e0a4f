package cli

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/loopback"
)

// listenMetrics binds metrics.listen, when set (and metrics.enabled): nil without one. It runs
// before anything is created (see serve). A metrics.listen that is not a loopback address is
// logged as a warning: /metrics has no authentication.
func listenMetrics(m config.Metrics, log *slog.Logger) (net.Listener, error) {
	if !m.Enabled || m.Listen == "" {
		return nil, nil
	}
	ln, err := listenTCP(m.Listen, "metrics.listen", "set another metrics.listen")
	if err != nil {
		return nil, err
	}
	if host, _, err := net.SplitHostPort(m.Listen); err != nil || !loopback.IsHost(host) {
		log.Warn("metrics.listen is not a loopback address: /metrics has no authentication, so anyone who reaches it reads the metrics (firewall it, or set metrics.allowed_hosts and keep it on a private network)",
			"metrics_listen", m.Listen)
	}
	return ln, nil
}

// serveMetrics serves h (GET /metrics alone, see server.MetricsListenerHandler) on ln, the
// metrics listener of its own; stop shuts it down. With ln nil (metrics.listen empty) /metrics
// is a route of the application itself, and stop does nothing.
func serveMetrics(ln net.Listener, h http.Handler, log *slog.Logger) (stop func()) {
	if ln == nil {
		return func() {}
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
		WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener stopped", "addr", ln.Addr().String(), "err", err)
		}
	}()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		<-done
	}
}
