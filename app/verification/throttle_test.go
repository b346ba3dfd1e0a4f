package verification_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
	"github.com/idvault/idvault/store"
)

func TestSendThrottles(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   func(s *setup)
		sends []string // (address, X-Forwarded-For) pairs, all admitted
		// then the refused one:
		to, xff    string
		retryAfter string
		message    string
		// after waiting this long, the same send is admitted.
		wait time.Duration
	}{
		{"per address", func(s *setup) { s.cfg.AddressSendLimit, s.cfg.AddressSendWindow = 2, 10*time.Minute },
			[]string{"a@x.io", "", "a@x.io", "", "b@x.io", ""},
			"a@x.io", "", "600", "too many codes sent to this address; retry in 10m0s", 10 * time.Minute},
		{"per app", func(s *setup) { s.cfg.AppSendLimit, s.cfg.AppSendWindow = 3, time.Hour },
			[]string{"a@x.io", "", "b@x.io", "", "c@x.io", ""},
			"d@x.io", "", "3600", "this app sent too many codes; retry in 1h0m0s", time.Hour},
		{"per client IP behind a trusted proxy", func(s *setup) {
			s.cfg.IPRate, s.cfg.IPBurst = 0.1, 2
			s.proxies = []string{"0.0.0.0/32", "10.0.0.0/8"}
		},
			[]string{"a@x.io", "203.0.113.7, 10.1.1.1", "b@x.io", "198.51.100.1, 203.0.113.7", "c@x.io", "203.0.113.8"},
			"d@x.io", "192.0.2.1, 203.0.113.7, 10.9.9.9", "10", "too many send requests from this client; retry in 10s", 10 * time.Second},
		{"X-Forwarded-For ignored from an untrusted peer", func(s *setup) { s.cfg.IPRate, s.cfg.IPBurst = 1, 2 },
			[]string{"a@x.io", "203.0.113.1", "b@x.io", "203.0.113.2"},
			"c@x.io", "203.0.113.3", "1", "too many send requests from this client; retry in 1s", time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, tc.cfg)
			a := e.createApp(t, false, store.AppOptions{})
			send := func(to, xff string) apptest.Response {
				if xff == "" {
					return e.send(t, a, emailData(to))
				}
				return e.send(t, a, emailData(to), "X-Forwarded-For", xff)
			}
			for i := 0; i < len(tc.sends); i += 2 {
				r := send(tc.sends[i], tc.sends[i+1])
				require.Equal(t, http.StatusOK, r.Status, "send %d: %s", i/2, r.Body)
			}
			r := send(tc.to, tc.xff)
			require.Equal(t, http.StatusTooManyRequests, r.Status, "body: %s", r.Body)
			require.Equal(t, "max_attempts_reached", r.ErrorCode(t))
			require.Equal(t, tc.retryAfter, r.Header.Get("Retry-After"))
			var b struct {
				Error struct{ Message string } `json:"error"`
			}
			r.JSON(t, &b)
			require.Equal(t, tc.message, b.Error.Message)
			require.Equal(t, len(tc.sends)/2, e.SMTP.MessageCount())

			e.Clock.Add(tc.wait)
			r = send(tc.to, tc.xff)
			require.Equal(t, http.StatusOK, r.Status, "after the wait: %s", r.Body)
		})
	}
}

func TestThrottleMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(s *setup) { s.cfg.AddressSendLimit = 1 })
	a := e.createApp(t, false, store.AppOptions{})
	c := e.sendOK(t, a, "m@x.io")
	require.Equal(t, "max_attempts_reached", e.send(t, a, emailData("m@x.io")).ErrorCode(t))
	require.Equal(t, "invalid_verification_code", e.verify(t, a, "m@x.io", "1").ErrorCode(t))
	require.Equal(t, http.StatusOK, e.verify(t, a, "m@x.io", c).Status)

	r := apptest.Do(t, e.App, "GET", "/metrics", nil)
	require.Equal(t, http.StatusOK, r.Status)
	for _, line := range []string{
		"idvault_verification_sends_total 1",
		`idvault_verification_throttled_total{reason="address"} 1`,
		`idvault_verification_verifies_total{result="wrong"} 1`,
		`idvault_verification_verifies_total{result="ok"} 1`,
	} {
		require.Contains(t, string(r.Body), line)
	}
	require.NotContains(t, string(r.Body), fmt.Sprint(c), "metrics carry no code")
}

// Sends that fail during an SMTP outage give their address, app and client-IP counts back: once
// the server is back, the next send goes through. A permanent refusal still counts.
func TestFailedSendsGiveTheirQuotaBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(s *setup) {
		s.cfg.AddressSendLimit, s.cfg.AppSendLimit = 2, 3
		s.cfg.IPRate, s.cfg.IPBurst = 0.001, 3
	})
	a := e.createApp(t, false, store.AppOptions{})
	e.SMTP.SetFault(mailtest.Fault{At: mailtest.AtConnect, Code: 421})
	for range 5 {
		require.Equal(t, "send_email_error", e.send(t, a, emailData("out@x.io")).ErrorCode(t))
	}
	e.SMTP.SetFault(mailtest.Fault{At: mailtest.AtConnect, Action: mailtest.Drop, Times: 5})
	for range 5 {
		require.Equal(t, "send_email_error", e.send(t, a, emailData("out@x.io")).ErrorCode(t))
	}
	e.SMTP.ClearFaults()
	e.sendOK(t, a, "out@x.io")
	e.sendOK(t, a, "out@x.io")
	require.Equal(t, "max_attempts_reached", e.send(t, a, emailData("out@x.io")).ErrorCode(t), "the limit still holds")

	// A recipient the server refuses for good still uses up the app's (and the IP's) quota.
	e.SMTP.SetFault(mailtest.Fault{At: mailtest.AtRcpt, Code: 550})
	require.Equal(t, "send_email_error", e.send(t, a, emailData("gone@x.io")).ErrorCode(t))
	e.SMTP.ClearFaults()
	r := e.send(t, a, emailData("other@x.io"))
	require.Equal(t, "max_attempts_reached", r.ErrorCode(t), "body: %s", r.Body)
}

// A send whose whole mail was out when the SMTP server went silent (timeout) or hung up instead
// of answering the final "." of DATA may have been delivered: it keeps its quota (else a
// server that swallows mails and never answers hands out unlimited codes) and its code stays
// valid, so the user who got the mail can use it.
func TestSendsThatMayHaveBeenDeliveredKeepTheirQuota(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		fault mailtest.Fault
		stage string
	}{
		{"timeout after DATA", mailtest.Fault{At: mailtest.AtData, Action: mailtest.Stall, Times: 1}, mail.StageTimeout},
		{"connection lost after DATA", mailtest.Fault{At: mailtest.AtData, Action: mailtest.Drop, Times: 1}, mail.StageData},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, func(s *setup) {
				s.cfg.AddressSendLimit = 1
				s.mail.Timeout = 300 * time.Millisecond
			})
			a := e.createApp(t, false, store.AppOptions{})
			e.SMTP.SetFault(tc.fault)
			r := e.send(t, a, emailData("out@x.io"))
			require.Equal(t, "send_email_error", r.ErrorCode(t))
			var b struct {
				Error struct{ Message string } `json:"error"`
			}
			r.JSON(t, &b)
			require.Contains(t, b.Error.Message, fmt.Sprintf("stage %q", tc.stage))
			require.Contains(t, b.Error.Message, "may still arrive")
			code := codeIn(t, e.Mail.last(t).Text)

			r = e.send(t, a, emailData("out@x.io"))
			require.Equal(t, "max_attempts_reached", r.ErrorCode(t), "the send was not refunded; body: %s", r.Body)
			require.Equal(t, http.StatusOK, e.verify(t, a, "out@x.io", code).Status, "the code of a mail that may be out stays valid")
		})
	}
}

// IPv6 clients are counted per /64 (verification.ipv6_prefix): a host that owns a whole /64
// cannot dodge the IP limit by changing address.
func TestIPv6ClientsCountedPerNetwork(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		prefix  int
		refused bool
	}{{64, true}, {128, false}} {
		e := newEnv(t, func(s *setup) {
			s.cfg.IPRate, s.cfg.IPBurst, s.cfg.IPv6Prefix = 0.001, 2, tc.prefix
			s.proxies = []string{"0.0.0.0/32"}
		})
		a := e.createApp(t, false, store.AppOptions{})
		send := func(to, ip string) apptest.Response { return e.send(t, a, emailData(to), "X-Forwarded-For", ip) }
		require.Equal(t, http.StatusOK, send("a@x.io", "2001:db8:1:2::1").Status)
		require.Equal(t, http.StatusOK, send("b@x.io", "2001:db8:1:2::2").Status)
		r := send("c@x.io", "2001:db8:1:2:ffff:ffff:ffff:ffff")
		if tc.refused {
			require.Equal(t, "max_attempts_reached", r.ErrorCode(t), "same /64")
		} else {
			require.Equal(t, http.StatusOK, r.Status, "/128: each address apart")
		}
		require.Equal(t, http.StatusOK, send("d@x.io", "2001:db8:1:3::1").Status, "another /64")
		require.Equal(t, http.StatusOK, send("e@x.io", "192.0.2.1").Status)
		require.Equal(t, http.StatusOK, send("f@x.io", "192.0.2.2").Status, "IPv4 addresses count apart")
	}
}
