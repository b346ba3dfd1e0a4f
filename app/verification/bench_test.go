package verification_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/mail/mailtest"
	"github.com/idvault/idvault/store"
)

// benchClients is the number of concurrent HTTP clients of every benchmark below.
const benchClients = 32

// BenchmarkVerification measures, in one run and with the same driver (32 concurrent keep-alive
// HTTP clients over loopback), the echo route (the HTTP baseline), sends to the in-process SMTP
// sink, /code and /verify. Each reports req/s.
func BenchmarkVerification(b *testing.B) {
	e := newEnv(b, func(s *setup) {
		s.smtp = mailtest.Options{Discard: true}
		s.mail.PoolSize = 8
		s.cfg.AddressSendLimit, s.cfg.AppSendLimit = 1<<30, 1<<30
		s.cfg.IPRate, s.cfg.IPBurst = 1e9, 1<<30
	})
	url, client := apptest.Serve(b, e.App)
	echoURL, echoClient := apptest.Serve(b, apptest.EchoApp())
	prod, test := e.createApp(b, false, store.AppOptions{}), e.createApp(b, true, store.AppOptions{})
	var round atomic.Int64

	b.Run("echo", func(b *testing.B) {
		body := mustJSON(b, with(creds(prod), "email", "echo@bench.example"))
		benchHTTP(b, echoClient, func(int64) *http.Request { return post(echoURL+"/echo", body) })
	})
	b.Run("send", func(b *testing.B) {
		r := round.Add(1)
		benchHTTP(b, client, func(i int64) *http.Request {
			d := emailData(fmt.Sprintf("s%d-%d@bench.example", r, i))
			return post(url+"/verification/email", mustJSON(b, with(creds(prod), "email_data", d)))
		})
		b.ReportMetric(float64(e.SMTP.MessageCount()), "mails")
	})
	b.Run("code", func(b *testing.B) {
		r := round.Add(1)
		benchHTTP(b, client, func(i int64) *http.Request {
			// 256 addresses: mostly the newest code is read back, sometimes one is issued.
			return post(url+"/verification/email/code", mustJSON(b, with(creds(test), "email", fmt.Sprintf("c%d-%d@bench.example", r, i%256))))
		})
	})
	b.Run("verify", func(b *testing.B) {
		r := round.Add(1)
		codes := issueCodes(b, client, url, test, r, b.N)
		benchHTTP(b, client, func(i int64) *http.Request {
			return post(url+"/verification/email/verify", mustJSON(b, with(creds(test),
				"email", fmt.Sprintf("v%d-%d@bench.example", r, i), "verification_code", codes[i])))
		})
	})
}

// issueCodes gets n codes through /code (before the timer starts), one per address v<round>-<i>.
func issueCodes(b *testing.B, client *http.Client, url string, a apps.Created, round int64, n int) []string {
	b.Helper()
	codes := make([]string, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range benchClients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(n); i = next.Add(1) - 1 {
				resp, err := client.Do(post(url+"/verification/email/code", mustJSON(b, with(creds(a), "email", fmt.Sprintf("v%d-%d@bench.example", round, i)))))
				if err != nil {
					b.Error(err)
					return
				}
				var body struct {
					Code string `json:"verification_code"`
				}
				err = json.NewDecoder(resp.Body).Decode(&body)
				resp.Body.Close()
				if err != nil || body.Code == "" {
					b.Errorf("no code: %v", err)
					return
				}
				codes[i] = body.Code
			}
		}()
	}
	wg.Wait()
	return codes
}

// benchHTTP runs b.N requests from benchClients goroutines, requires 200 for each and reports
// req/s.
func benchHTTP(b *testing.B, client *http.Client, next func(i int64) *http.Request) {
	b.Helper()
	procs := runtime.GOMAXPROCS(0)
	b.SetParallelism((benchClients + procs - 1) / procs)
	var n atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp, err := client.Do(next(n.Add(1) - 1))
			if err != nil {
				b.Error(err)
				return
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Errorf("status %d: %s", resp.StatusCode, raw)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func post(url string, body []byte) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		panic(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

func mustJSON(b *testing.B, v any) []byte {
	raw, err := json.Marshal(v)
	require.NoError(b, err)
	return raw
}
