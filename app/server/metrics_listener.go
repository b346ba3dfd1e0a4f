package server

import (
	"encoding/json"
	"net/http"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/httpguard"
)

// MetricsListenerHandler is the handler of the metrics listener of its own (metrics.listen): GET
// /metrics behind the Host check the main listener makes (httpguard.HostCheck), with the names
// of metrics.allowed_hosts, or, when none are given, loopback names and the listen host on a
// loopback address. Another Host header gets a JSON 421 host_not_allowed, as on the main
// listener: a web page whose name is made to resolve to the loopback address cannot read the
// metrics through the visitor's browser (DNS rebinding).
func (s *Server) MetricsListenerHandler(listen string, allowed []string) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.MetricsHandler())
	allows := httpguard.HostCheck(listen, allowed)
	if allows == nil {
		return mux
	}
	refusal, _ := json.Marshal(map[string]any{"error": map[string]any{
		"status": apierr.MetricsHostNotAllowed.Status, "code": apierr.MetricsHostNotAllowed.Name,
		"message": apierr.MetricsHostNotAllowed.Message,
	}})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allows(r.Host) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(apierr.MetricsHostNotAllowed.Status)
			_, _ = w.Write(refusal)
			return
		}
		mux.ServeHTTP(w, r)
	})
}
