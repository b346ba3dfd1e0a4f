package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idvault/idvault/app/admin"
)

// registerAdminMetrics exposes the admin token throttle's counts (admin API and console
// sign-in together): idvault_admin_auth_refusals_total by reason (wrong_token: a wrong
// token; locked: refused because the address is locked) and idvault_admin_auth_locks_total.
func registerAdminMetrics(reg prometheus.Registerer, a *admin.Handler) {
	if a == nil {
		return
	}
	st := a.Stats()
	refusals := func(reason string, f func() float64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "idvault_admin_auth_refusals_total", Help: "Admin token checks refused (admin API and console sign-in), by reason.",
			ConstLabels: prometheus.Labels{"reason": reason},
		}, f)
	}
	reg.MustRegister(
		refusals("wrong_token", func() float64 { return float64(st.WrongTokens.Load()) }),
		refusals("locked", func() float64 { return float64(st.LockedRefusals.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "idvault_admin_auth_locks_total", Help: "Client addresses locked out of the admin API and console sign-in after too many wrong tokens.",
		}, func() float64 { return float64(st.Locks.Load()) }),
	)
}
