package server

import "github.com/prometheus/client_golang/prometheus"

// RegisterBuildInfo adds idvault_build_info{version,revision,goversion} 1 to reg: which
// idvault a scraped server runs (the convention of Prometheus' own *_build_info metrics).
func RegisterBuildInfo(reg prometheus.Registerer, version, revision, goVersion string) {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "idvault_build_info",
		Help: "Always 1; its labels say the release (or devel), the VCS commit and the Go version of the running binary.",
		ConstLabels: prometheus.Labels{
			"version": version, "revision": revision, "goversion": goVersion,
		},
	})
	g.Set(1)
	reg.MustRegister(g)
}
