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
}

// DefaultMetrics is /metrics on server.listen.
func DefaultMetrics() Metrics { return Metrics{Enabled: true} }

// OnMainListener says whether /metrics is served on server.listen.
func (m Metrics) OnMainListener() bool { return m.Enabled && m.Listen == "" }

func (m Metrics) validate(serverListen string) []error {
	if m.Listen == "" {
		return nil
	}
	if _, err := checkListen(m.Listen); err != nil {
		return []error{fmt.Errorf("metrics.listen: %v", err)}
	}
	if m.Listen == serverListen {
		return []error{fmt.Errorf("metrics.listen: is server.listen (%s): leave it empty to serve /metrics there", m.Listen)}
	}
	return nil
}
