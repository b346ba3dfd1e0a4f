package idserver

import (
	"sync"
	"time"
)

// newIdentities limits how many new records (emails idvault had never seen) one signed-in user
// makes POST /public_identity create: at most max per window, counted per ID token email, in a
// window that opens at the user's first creation after the last one closed. Without it, anyone
// who can sign in with the provider could fill the data file with provisional identities (each
// a record on disk, about 12,000 a second). The app token, a trusted backend, is not limited;
// nor are lookups of emails that have a record. A request takes a creation before the directory
// is asked and gives it back (refund) when no record was created, so the limit holds under
// concurrent requests without a lookup before the directory's own. The price, for a user at the
// last creation of the window only: while one request holds that creation for an email that
// turns out to have a record, a concurrent request for a new email is answered 429 with the
// window's Retry-After, though the creation is given back a moment later (the count itself
// stays exact).
//
// The counts are in memory: a restart starts them again, which a flood cannot use (it cannot
// restart the server), and the store is spared a write per lookup. Memory stays bounded by the
// users active in one window: ended windows are dropped whenever the table doubles.
type newIdentities struct {
	max    int
	window time.Duration

	mu    sync.Mutex
	users map[string]*creations
	prune int // the table's size that triggers the next drop of ended windows
}

type creations struct {
	start time.Time
	n     int
}

// newNewIdentities returns the limit, or nil when max is 0 (no limit).
func newNewIdentities(max int, window time.Duration) *newIdentities {
	if max <= 0 || window <= 0 {
		return nil
	}
	return &newIdentities{max: max, window: window, users: map[string]*creations{}, prune: 1024}
}

// take counts one creation for user at now and returns the window it counts in (for refund),
// or, when the user's window is full, how long until it ends.
func (l *newIdentities) take(user string, now time.Time) (w *creations, wait time.Duration, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.users[user]
	if c == nil || !now.Before(c.start.Add(l.window)) {
		if c == nil && len(l.users) >= l.prune {
			l.dropEnded(now)
		}
		c = &creations{start: now}
		l.users[user] = c
	}
	if c.n >= l.max {
		return nil, c.start.Add(l.window).Sub(now), false
	}
	c.n++
	return c, 0, true
}

// refund gives back a creation take counted in window w that did not happen. A window left
// with none is forgotten, so the next one opens at the user's next creation; a window that
// ended meanwhile (the user has another) is left alone.
func (l *newIdentities) refund(user string, w *creations) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.users[user] != w || w.n == 0 {
		return
	}
	if w.n--; w.n == 0 {
		delete(l.users, user)
	}
}

// dropEnded forgets the users whose window ended, and sets the next size to do it again at.
func (l *newIdentities) dropEnded(now time.Time) {
	for u, c := range l.users {
		if !now.Before(c.start.Add(l.window)) {
			delete(l.users, u)
		}
	}
	l.prune = max(1024, 2*len(l.users))
}
