package config

import "fmt"

// Metrics is the Prometheus endpoint, /metrics.
type Metrics struct {
	// Enabled serves /metrics (default true).
	Enabled bool `koanf:"enabled"`
	// Listen, when set, serves /metrics on this address alone (host:port) instead of
	// server.listen, so that a scraper can reach it on a network the API is not on, or the
	// API's listener can be published without it.
	Listen string `koanf:"listen"`
	// AllowedHosts are the Host header names the metrics listener answers, as
	// server.allowed_hosts does for server.listen (others get a JSON 421 host_not_allowed).
	// Empty: on a loopback metrics.listen, loopback names and its own host; on any other
	// address any host (start-up then warns: /metrics has no authentication).
	AllowedHosts []string `koanf:"allowed_hosts"`
}

// DefaultMetrics is /metrics on server.listen.
func DefaultMetrics() Metrics { return Metrics{Enabled: true, AllowedHosts: []string{}} }

// OnMainListener says whether /metrics is served on server.listen.
func (m Metrics) OnMainListener() bool { return m.Enabled && m.Listen == "" }

func (m Metrics) validate(serverListen string) []error {
	if m.Listen == "" {
		return nil
	}
	if errs := checkHosts("metrics.allowed_hosts", m.AllowedHosts); len(errs) > 0 {
		return errs
	}
	if _, err := checkListen(m.Listen); err != nil {
		return []error{fmt.Errorf("metrics.listen: %v", err)}
	}
	if m.Listen == serverListen {
		return []error{fmt.Errorf("metrics.listen: is server.listen (%s): leave it empty to serve /metrics there", m.Listen)}
	}
	return nil
}
