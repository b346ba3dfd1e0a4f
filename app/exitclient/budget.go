package exitclient

import (
	"fmt"
	"sync"
	"time"
)

// DefaultMaxOutage is how long a run keeps retrying while no request to the server succeeds,
// when RetryBudget.MaxOutage is zero.
const DefaultMaxOutage = 30 * time.Second

// RetryBudget is the retry allowance of one run, shared by every request the run sends (all
// files of a decrypt, all batches of an import, whatever workers send them): a circuit breaker,
// not a count per request. Failures (connection errors, 5xx, 429) are retried while the server
// has answered well recently; once no request has succeeded for MaxOutage, the budget trips
// (at that moment when a request is waiting to retry: a backoff never runs past it),
// every waiting and later request fails at once with an *UnavailableError, and the run stops
// with that one error instead of one per file. A success ends an outage; a trip is final.
//
// The zero value is ready to use (MaxOutage DefaultMaxOutage). Safe for concurrent use.
type RetryBudget struct {
	// MaxOutage is how long requests keep being retried while none succeeds (default 30 s).
	MaxOutage time.Duration

	mu       sync.Mutex
	since    time.Time // start of the current outage; zero when the last answer was good
	lastGood time.Time
	tripped  *UnavailableError
	done     chan struct{} // closed on trip; made on first use
}

// NewRetryBudget returns a budget that trips after maxOutage without a successful request
// (DefaultMaxOutage when maxOutage is not positive).
func NewRetryBudget(maxOutage time.Duration) *RetryBudget {
	return &RetryBudget{MaxOutage: maxOutage}
}

func (b *RetryBudget) maxOutage() time.Duration {
	if b.MaxOutage <= 0 {
		return DefaultMaxOutage
	}
	return b.MaxOutage
}

func (b *RetryBudget) doneLocked() chan struct{} {
	if b.done == nil {
		b.done = make(chan struct{})
	}
	return b.done
}

// Success records a good answer from the server: any outage is over.
func (b *RetryBudget) Success() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.since = time.Time{}
	b.lastGood = time.Now()
}

// FailureSince records a failed attempt, started at started, at the server at url (cause: the
// transport error or the retryable answer). It returns nil while the request may be retried,
// and the *UnavailableError that stops the run once no request has succeeded for MaxOutage. An
// attempt that hung before failing counts its whole wait as outage (though never from before
// the last success).
func (b *RetryBudget) FailureSince(url string, cause error, started time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.tripped != nil {
		return b.tripped
	}
	now := time.Now()
	if started.Before(b.lastGood) {
		started = b.lastGood
	}
	if b.since.IsZero() || started.Before(b.since) {
		b.since = started
	}
	return b.tripLocked(url, now.Sub(b.since), cause)
}

// tripLocked trips the budget when outage has reached MaxOutage (b.mu held, not tripped yet),
// and returns what Err would.
func (b *RetryBudget) tripLocked(url string, outage time.Duration, cause error) error {
	if b.tripped == nil && outage >= b.maxOutage() {
		b.tripped = &UnavailableError{URL: url, For: outage.Round(time.Millisecond), Last: cause}
		close(b.doneLocked())
	}
	return b.errLocked()
}

// errLocked is Err with b.mu held: a nil error, not a nil *UnavailableError, until tripped.
func (b *RetryBudget) errLocked() error {
	if b.tripped == nil {
		return nil
	}
	return b.tripped
}

// deadline is when the current outage reaches MaxOutage; ok is false outside an outage.
func (b *RetryBudget) deadline() (t time.Time, ok bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since.IsZero() {
		return time.Time{}, false
	}
	return b.since.Add(b.maxOutage()), true
}

// expire trips the budget when the current outage has lasted MaxOutage (a request waiting to
// retry reached the deadline: retrying later would stretch the outage past the budget), with
// cause, the waiting request's last failure, at the server at url. It returns what Err would.
func (b *RetryBudget) expire(url string, cause error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.since.IsZero() {
		return b.errLocked()
	}
	return b.tripLocked(url, time.Since(b.since), cause)
}

// Err is the *UnavailableError once the budget has tripped, else nil.
func (b *RetryBudget) Err() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.errLocked()
}

// Done is closed when the budget trips, so that requests waiting to retry stop at once.
func (b *RetryBudget) Done() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.doneLocked()
}

// succeededSince reports whether some request succeeded after t: the server is up for others,
// so a request failing since t fails on its own account.
func (b *RetryBudget) succeededSince(t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.lastGood.After(t)
}

// UnavailableError stops a run: no request to the server at URL succeeded for For.
type UnavailableError struct {
	URL  string        // the server's base URL, password redacted
	For  time.Duration // how long the outage lasted when the run gave up
	Last error         // the last failure seen
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("no request to the exit server at %s succeeded for %s (last error: %v)", e.URL, e.For, e.Last)
}

func (e *UnavailableError) Unwrap() error { return e.Last }
