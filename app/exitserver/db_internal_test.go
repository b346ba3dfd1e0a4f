package exitserver

import (
	"context"
	"testing"
	"time"
)

// A key lookup's context ends as context.WithDeadline's does, whether or not anything waited
// on it before.
func TestLookupContextEndsAsWithDeadline(t *testing.T) {
	s := &Server{cfg: Config{KeyLookupTimeout: time.Hour}}
	c := s.lookupContext()
	if c.Err() != nil {
		t.Fatalf("a fresh lookup context ended: %v", c.Err())
	}
	if d, ok := c.Deadline(); !ok || time.Until(d) < 59*time.Minute {
		t.Fatalf("deadline %v, %v: want an hour from now", d, ok)
	}
	c.cancel()
	if c.Err() != context.Canceled {
		t.Fatalf("Err after cancel: %v", c.Err())
	}
	<-c.Done() // made after the cancel: already closed

	waited := s.lookupContext()
	done := waited.Done()
	waited.cancel()
	<-done
	if waited.Err() != context.Canceled {
		t.Fatalf("Err after cancel: %v", waited.Err())
	}

	s.cfg.KeyLookupTimeout = time.Millisecond
	late := s.lookupContext()
	<-late.Done()
	if late.Err() != context.DeadlineExceeded {
		t.Fatalf("Err past the deadline: %v", late.Err())
	}
	unwatched := s.lookupContext()
	time.Sleep(2 * time.Millisecond)
	if unwatched.Err() != context.DeadlineExceeded {
		t.Fatalf("Err past the deadline, nothing waiting: %v", unwatched.Err())
	}
	unwatched.cancel()
}
