package logging

import (
	"sync/atomic"
	"time"
)

// Every says yes at most once per Period: the one log line of a storm (a connection flood, a
// damaged data file failing every request) per period, rather than one per event. Safe for
// concurrent use; the zero value with a Period says yes at once.
type Every struct {
	Period time.Duration
	last   atomic.Int64 // UnixNano of the last yes; 0: never
}

// Due reports whether Period passed since the last yes, and if so counts now as one.
func (e *Every) Due(now time.Time) bool {
	last := e.last.Load()
	if last != 0 && now.UnixNano()-last < int64(e.Period) {
		return false
	}
	return e.last.CompareAndSwap(last, now.UnixNano())
}
