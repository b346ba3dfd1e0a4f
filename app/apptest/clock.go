package apptest

import (
	"sync"
	"time"
)

// Clock is a settable clock for code that takes a func() time.Time: tests move it forward
// instead of sleeping.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock starts a clock at a fixed instant.
func NewClock() *Clock {
	return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// NewClockAt starts a clock at start, such as time.Now() for tokens minted on the real time:
// the clock then stands still and moves only by Add.
func NewClockAt(start time.Time) *Clock {
	return &Clock{now: start}
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Add moves the clock forward by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
