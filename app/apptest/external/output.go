package external

import (
	"bytes"
	"sync"
)

// Output collects what a child process or a logger under test writes, from any number of
// goroutines, for a test to read so far: to check that no secret reaches a log, or to say why
// a process failed. The zero value is ready to use.
type Output struct {
	// Limit, when positive, is how many bytes are kept: writes past it are dropped (for a
	// long-running process whose output only serves an error message).
	Limit int

	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps p (or drops it past Limit); it never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Limit > 0 && o.b.Len() > o.Limit {
		return len(p), nil
	}
	return o.b.Write(p)
}

// String is everything written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}
