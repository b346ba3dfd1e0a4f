package server

import (
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// httpMetrics are the request metrics: counts and latency by route, method and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series holds the counter and histogram of each (route, method, status) seen, so that a
	// request does not hash its labels twice to find them: a map replaced whole (under mu) when
	// a new one appears, read without a lock (cheaper than a sync.Map; the set is small and
	// soon complete).
	series atomic.Pointer[map[seriesKey]*series]
	mu     sync.Mutex
}

type seriesKey struct {
	route, method string
	status        int
}

type series struct {
	requests prometheus.Counter
	duration prometheus.Observer
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idvault_http_requests_total", Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "idvault_http_request_duration_seconds", Help: "HTTP request latency by route pattern, method and status.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method", "status"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

func (m *httpMetrics) observe(route, method string, status int, d time.Duration) {
	k := seriesKey{route, method, status}
	var s *series
	if all := m.series.Load(); all != nil {
		s = (*all)[k]
	}
	if s == nil {
		s = m.add(k)
	}
	s.requests.Inc()
	s.duration.Observe(d.Seconds())
}

// add makes the series of k (or finds it, made meanwhile) and publishes it.
func (m *httpMetrics) add(k seriesKey) *series {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := m.series.Load()
	if old != nil {
		if s := (*old)[k]; s != nil {
			return s
		}
	}
	status := statusLabel(k.status)
	s := &series{
		requests: m.requests.WithLabelValues(k.route, k.method, status),
		duration: m.duration.WithLabelValues(k.route, k.method, status),
	}
	all := make(map[seriesKey]*series, 1)
	if old != nil {
		all = maps.Clone(*old)
	}
	all[k] = s
	m.series.Store(&all)
	return s
}

// NewRegistry is a fresh Prometheus registry with the Go runtime and process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}
