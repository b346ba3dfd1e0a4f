package store

import (
	"bytes"
	"fmt"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkCodeSends measures IssueCode as POST /verification/email calls it (send limits
// checked and consumed, a fresh address per send) through three write paths on the same store,
// interleaved in the same run: the group commit IssueCode uses, bbolt's db.Batch (what it used
// before: a write waits up to MaxBatchDelay, 10 ms, for others), and one db.Update per send (no
// sharing, no wait). With one sender it reports a lone send's latency per path and how many
// times slower the baselines are; with 32 senders, sends per second per path and the group
// commit's rate as a multiple of each baseline's. b.N is the number of sends per path; ns/op is
// the group commit's wall time per send.
func BenchmarkCodeSends(b *testing.B) {
	paths := []struct {
		name  string
		write func(s *Store) writeFunc
	}{
		{"group", func(s *Store) writeFunc { return s.group.update }},
		{"batch", func(s *Store) writeFunc { return s.db.Batch }},
		{"update", func(s *Store) writeFunc { return s.db.Update }},
	}
	app := bytes.Repeat([]byte{7}, 32)
	huge := Window{Max: 1 << 30, Per: time.Hour}
	for _, senders := range []int{1, 32} {
		b.Run(fmt.Sprintf("senders=%d", senders), func(b *testing.B) {
			s, _ := openTemp(b, newKey(b))
			var n atomic.Int64
			took := make([]time.Duration, len(paths))
			sent := make([]int, len(paths))
			var groupStats CommitStats
			// The paths alternate, in a rotating order, so that a slow spell of the machine (its
			// disk is shared) hits them alike: a lone sender sends one code per path in turn;
			// 32 senders send a fifth of b.N per path in turn.
			rounds := 5
			if senders == 1 {
				rounds = b.N
			}
			for round := range rounds {
				for i := range paths {
					p := (round + i) % len(paths) // each round starts with another path
					path := paths[p]
					write := path.write(s)
					per := max(1, b.N/rounds/senders)
					before := s.RecordCommits()
					start := time.Now()
					var wg sync.WaitGroup
					for g := range senders {
						wg.Go(func() {
							lim := SendLimits{Address: huge, App: huge, IP: Rate{PerSecond: 1e9, Burst: 1 << 30},
								ClientIP: netip.AddrFrom4([4]byte{192, 0, 2, byte(g)})}
							for range per {
								in := issue(app, fmt.Sprintf("u%d@example.com", n.Add(1)), "12345678", false)
								in.Limits = &lim
								if _, err := s.issueCode(write, in); err != nil {
									b.Error(err)
									return
								}
							}
						})
					}
					wg.Wait()
					took[p] += time.Since(start)
					sent[p] += per * senders
					if path.name == "group" {
						groupStats = groupStats.Add(s.RecordCommits().Sub(before))
					}
				}
			}
			perSend := func(p int) time.Duration { return took[p] / time.Duration(sent[p]) }
			b.ReportMetric(float64(perSend(0).Nanoseconds()), "ns/op")
			if senders == 1 {
				for p, path := range paths {
					b.ReportMetric(float64(perSend(p).Microseconds()), path.name+"-µs/send")
				}
				for p := 1; p < len(paths); p++ {
					b.ReportMetric(float64(perSend(p))/float64(perSend(0)), paths[p].name+"/group")
				}
				return
			}
			rate := func(p int) float64 { return float64(sent[p]) / took[p].Seconds() }
			for p, path := range paths {
				b.ReportMetric(rate(p), path.name+"-sends/s")
			}
			for p := 1; p < len(paths); p++ {
				b.ReportMetric(rate(0)/rate(p), "group/"+paths[p].name)
			}
			if groupStats.Commits > 0 {
				b.ReportMetric(float64(groupStats.Writes)/float64(groupStats.Commits), "group-sends/commit")
			}
		})
	}
}
