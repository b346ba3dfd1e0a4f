package exitserver

import (
	"sync"
	"time"

	"github.com/idvault/idvault/app/apierr"
)

// budget bounds the bytes that request bodies and stream chunk buffers hold at once
// (exit.memory_budget). A request reserves what it will hold before it reads or allocates
// it, and gives it back when its answer is written. A reservation that does not fit waits
// for others to end, up to budgetWait, then the request gets 503 server_busy.
type budget struct {
	limit int64

	mu    sync.Mutex
	used  int64
	peak  int64
	freed chan struct{} // closed (and replaced) whenever bytes are given back
}

// budgetWait is how long a request waits for room in the budget before server_busy.
const budgetWait = 2 * time.Second

// busyRetryAfter is the Retry-After of server_busy.
const busyRetryAfter = time.Second

func newBudget(limit int64) *budget {
	return &budget{limit: limit, freed: make(chan struct{})}
}

// reserve takes n bytes, waiting up to wait for room; it returns the function that gives them
// back (safe to call more than once). A request larger than the whole budget can never fit:
// payload_too_large.
func (b *budget) reserve(n int64, wait time.Duration) (func(), error) {
	if n > b.limit {
		return nil, apierr.PayloadTooLarge.Msg("the request needs %d bytes of memory, more than exit.memory_budget (%d bytes)", n, b.limit)
	}
	var timer <-chan time.Time
	for {
		b.mu.Lock()
		if b.used+n <= b.limit {
			b.used += n
			b.peak = max(b.peak, b.used)
			b.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { b.give(n) }) }, nil
		}
		freed := b.freed
		b.mu.Unlock()
		if timer == nil {
			t := time.NewTimer(wait)
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-freed:
		case <-timer:
			e := apierr.ServerBusy.New()
			e.RetryAfter = busyRetryAfter
			return nil, e
		}
	}
}

// reservation is what one request reserved in the budget. The handler defers done, which gives
// the bytes back unless handOver passed them on to what writes the answer after the handler
// returned (a body stream, a hijacked connection).
type reservation struct {
	release    func()
	handedOver bool
}

// hold is reserve for a handler that may hand its bytes over: `defer r.done()`.
func (b *budget) hold(n int64, wait time.Duration) (reservation, error) {
	release, err := b.reserve(n, wait)
	return reservation{release: release}, err
}

// done gives the bytes back unless they were handed over.
func (r *reservation) done() {
	if !r.handedOver {
		r.release()
	}
}

// handOver returns the function that gives the bytes back, for the writer of the answer to
// call when it is written; done then leaves them reserved.
func (r *reservation) handOver() func() {
	r.handedOver = true
	return r.release
}

func (b *budget) give(n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= n
	close(b.freed)
	b.freed = make(chan struct{})
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
