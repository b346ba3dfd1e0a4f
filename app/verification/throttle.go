package verification

import (
	"net/netip"
	"time"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/store"
)

// sendLimits are the configured send throttles for a request from client.
func (h *Handler) sendLimits(client netip.Addr) store.SendLimits {
	return store.SendLimits{
		Address:  store.Window{Max: h.cfg.AddressSendLimit, Per: h.cfg.AddressSendWindow},
		App:      store.Window{Max: h.cfg.AppSendLimit, Per: h.cfg.AppSendWindow},
		IP:       store.Rate{PerSecond: h.cfg.IPRate, Burst: h.cfg.IPBurst},
		ClientIP: client, IPv6Prefix: h.cfg.IPv6Prefix,
	}
}

// throttled maps a store throttle refusal to max_attempts_reached, with the wait.
func (h *Handler) throttled(te *store.ThrottleError) *apierr.Error {
	h.metrics.throttled.WithLabelValues(te.Reason).Inc()
	wait := te.RetryAfter.Round(time.Second)
	if wait < time.Second {
		wait = time.Second
	}
	what := map[string]string{
		store.ReasonLocked:  "this address is locked after too many wrong codes",
		store.ReasonAddress: "too many codes sent to this address",
		store.ReasonApp:     "this app sent too many codes",
		store.ReasonIP:      "too many send requests from this client",
	}[te.Reason]
	e := apierr.MaxAttemptsReached.Msg("%s; retry in %s", what, wait)
	e.RetryAfter = wait
	return e
}
