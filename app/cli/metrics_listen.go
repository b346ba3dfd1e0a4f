package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/idvault/idvault/app/config"
)

// serveMetrics serves GET /metrics alone on metrics.listen, when set (and metrics.enabled);
// stop shuts that listener down. With metrics.listen empty /metrics is a route of the
// application itself.
func serveMetrics(m config.Metrics, h http.Handler, log *slog.Logger) (stop func(), err error) {
	if !m.Enabled || m.Listen == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", m.Listen)
	if err != nil {
		return nil, fmt.Errorf("metrics.listen %s: %w", m.Listen, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 10 * time.Second,
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
	}, nil
}
