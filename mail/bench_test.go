package mail_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/idvault/idvault/mail"
	"github.com/idvault/idvault/mail/mailtest"
)

// BenchmarkSendParallel32 measures sends per second to the in-process SMTP sink from 32
// concurrent goroutines through one Sender (default pool size, plain SMTP on loopback).
func BenchmarkSendParallel32(b *testing.B) {
	srv := mailtest.Start(b, mailtest.Options{Discard: true})
	cfg := testConfig(srv)
	cfg.PoolSize = mail.DefaultPoolSize
	s, err := mail.New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = s.Close() })
	msg := codeMessage()

	// RunParallel starts parallelism × GOMAXPROCS goroutines: aim for 32.
	procs := runtime.GOMAXPROCS(0)
	parallelism := (32 + procs - 1) / procs
	b.SetParallelism(parallelism)
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := s.Send(context.Background(), msg); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "sends/s")
	b.ReportMetric(float64(srv.Connections()), "conns")
}
