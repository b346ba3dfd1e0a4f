package mail_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

func TestConnectionReuse(t *testing.T) {
	cases := []struct {
		name        string
		tls         mail.TLSMode
		server      mailtest.Options
		concurrency int
		sends       int
		poolSize    int
	}{
		{name: "50 sequential sends, plain", tls: mail.TLSNone, concurrency: 1, sends: 50, poolSize: 4},
		{name: "50 sequential sends, STARTTLS and AUTH", tls: mail.TLSMandatory,
			server:      mailtest.Options{StartTLS: true, Username: "idv", Password: "s3cret"},
			concurrency: 1, sends: 50, poolSize: 4},
		{name: "32 concurrent senders, pool of 4", tls: mail.TLSNone, concurrency: 32, sends: 320, poolSize: 4},
		{name: "32 concurrent senders, pool of 2, implicit TLS", tls: mail.TLSImplicit,
			server: mailtest.Options{ImplicitTLS: true}, concurrency: 32, sends: 128, poolSize: 2},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := mailtest.Start(t, tc.server)
			cfg := testConfig(srv)
			cfg.TLS = tc.tls
			cfg.TLSSkipVerify = true
			cfg.Username, cfg.Password = tc.server.Username, tc.server.Password
			cfg.PoolSize = tc.poolSize
			s, _ := newSender(t, cfg)

			var wg sync.WaitGroup
			errs := make(chan error, tc.sends)
			jobs := make(chan struct{}, tc.sends)
			for range tc.sends {
				jobs <- struct{}{}
			}
			close(jobs)
			for range tc.concurrency {
				wg.Go(func() {
					for range jobs {
						errs <- s.Send(context.Background(), codeMessage())
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Equal(t, tc.sends, srv.MessageCount())
			if tc.concurrency == 1 {
				require.Equal(t, 1, srv.Connections(), "sequential sends must share one connection")
			} else {
				require.GreaterOrEqual(t, srv.Connections(), 1)
				require.LessOrEqual(t, srv.Connections(), tc.poolSize,
					"never more connections than pool_size")
			}
		})
	}
}

func TestPoolWaitIsBoundedByTimeout(t *testing.T) {
	srv := mailtest.Start(t, mailtest.Options{})
	cfg := testConfig(srv)
	cfg.PoolSize = 1
	cfg.Timeout = 300 * time.Millisecond
	s, _ := newSender(t, cfg)
	// The only connection hangs at RCPT; a second send waits for it and must time out too.
	srv.SetFault(mailtest.Fault{At: mailtest.AtRcpt, Action: mailtest.Stall, Times: 1})

	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Send(context.Background(), codeMessage()) })
	time.Sleep(50 * time.Millisecond)
	err := s.Send(context.Background(), codeMessage())
	wg.Wait()
	// Either it waited for the slot until its deadline, or it got the slot once the first
	// send gave up and then succeeded.
	if err != nil {
		require.Equal(t, mail.StageTimeout, mail.Stage(err), "error: %v", err)
	}
	require.NoError(t, s.Send(context.Background(), codeMessage()))
}
