package exitserver

import (
	"sync"
	"time"

	"github.com/idvault/idvault/app/apierr"
)

// budget bounds the bytes that request bodies and stream chunk buffers hold at once
// (exit.memory_budget). A request reserves what it will hold before it reads or allocates
// it, and gives it back when its answer is written (its handler returns). A reservation that does not fit waits
// for others to end, up to budgetWait, then the request gets 503 server_busy.
type budget struct {
	limit int64

	mu      sync.Mutex
	used    int64
	peak    int64
	freed   chan struct{} // closed (and replaced) when bytes are given back and someone waits
	waiting int           // reservations waiting on freed
}

// budgetWait is how long a request waits for room in the budget before server_busy.
const budgetWait = 2 * time.Second

// busyRetryAfter is the Retry-After of server_busy.
const busyRetryAfter = time.Second

func newBudget(limit int64) *budget {
	return &budget{limit: limit, freed: make(chan struct{})}
}

// reserve takes n bytes, waiting up to wait for room; the reservation's release gives them
// back (once). A request larger than the whole budget can never fit: payload_too_large.
func (b *budget) reserve(n int64, wait time.Duration) (reservation, error) {
	if n > b.limit {
		return reservation{}, apierr.PayloadTooLarge.Msg("the request needs %d bytes of memory, more than exit.memory_budget (%d bytes)", n, b.limit)
	}
	var timer <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			return reservation{b: b, n: n}, nil
		}
		freed := b.freed
		b.waiting++
		b.mu.Unlock()
		if timer == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-freed:
		case <-timer:
			b.mu.Lock()
			if b.freed == freed { // not woken: still counted
				b.waiting--
			}
			b.mu.Unlock()
			e := apierr.ServerBusy.New()
			e.RetryAfter = busyRetryAfter
			return reservation{}, e
		}
	}
}

// reservation is bytes taken from a budget. It is a value, so that a request's reservation
// costs no allocation: release it exactly once (defer it).
type reservation struct {
	b *budget
	n int64
}

// release gives the bytes back.
func (r reservation) release() {
	if r.b != nil {
		r.b.give(r.n)
	}
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	if b.waiting > 0 {
		close(b.freed)
		b.freed = make(chan struct{})
		b.waiting = 0 // each waiter tries again, and counts itself again if it must wait
	}
}

// MemoryStats are the budget's figures.
type MemoryStats struct {
	// Budget is exit.memory_budget in bytes.
	Budget int64
	// Reserved is what requests in flight hold now; Peak the most they held at once.
	Reserved, Peak int64
}

// Memory returns the memory budget's figures.
func (s *Server) Memory() MemoryStats {
	b := s.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	return MemoryStats{Budget: b.limit, Reserved: b.used, Peak: b.peak}
}
