// Package fakeclock is the tests' settable clock, for code that takes a func() time.Time: a
// test moves it forward instead of sleeping. Standard library only, so that the tests of any
// package (the store's, app/admin's internal ones) may import it without a cycle.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a settable clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New starts a clock at a fixed instant.
func New() *Clock {
	return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// At starts a clock at start, such as time.Now() for tokens minted on the real time: the
// clock then stands still and moves only by Add.
func At(start time.Time) *Clock {
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
