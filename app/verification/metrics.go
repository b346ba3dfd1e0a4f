package verification

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/store"
)

// Verify results, the label of idvault_verification_verifies_total.
const (
	resultOK       = "ok"
	resultWrong    = "wrong"
	resultExpired  = "expired"
	resultNotFound = "not_found"
	resultUsed     = "used"
	resultLocked   = "locked"
)

// metrics are the verification API's Prometheus metrics.
type metrics struct {
	sends     prometheus.Counter
	failures  *prometheus.CounterVec
	throttled *prometheus.CounterVec
	verifies  *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		sends: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "idvault_verification_sends_total",
			Help: "Verification mails accepted by the SMTP server.",
		}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idvault_verification_send_failures_total",
			Help: "Verification mails that could not be sent, by the SMTP stage that failed.",
		}, []string{"stage"}),
		throttled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idvault_verification_throttled_total",
			Help: "Sends refused by a throttle, by reason (locked, address, app, ip).",
		}, []string{"reason"}),
		verifies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "idvault_verification_verifies_total",
			Help: "Code checks, by result (ok, wrong, expired, used, not_found, locked).",
		}, []string{"result"}),
	}
	// Every known label exists from the start, at 0: a rate or an alert on a series works
	// before its first event, and a scrape shows what can be counted.
	for _, stage := range []string{mail.StageConnect, mail.StageTLS, mail.StageAuth, mail.StageMailFrom,
		mail.StageRcptTo, mail.StageData, mail.StageTimeout, mail.StageCanceled, mail.StageClosed, mail.StageMessage, "unknown"} {
		m.failures.WithLabelValues(stage)
	}
	for _, reason := range []string{store.ReasonLocked, store.ReasonAddress, store.ReasonApp, store.ReasonIP} {
		m.throttled.WithLabelValues(reason)
	}
	for _, result := range []string{resultOK, resultWrong, resultExpired, resultUsed, resultNotFound, resultLocked} {
		m.verifies.WithLabelValues(result)
	}
	if reg != nil {
		reg.MustRegister(m.sends, m.failures, m.throttled, m.verifies)
	}
	return m
}
