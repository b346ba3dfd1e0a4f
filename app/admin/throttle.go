package admin

import (
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// MaxTrackedClients bounds the client addresses the admin token throttle remembers at once.
// An entry costs about 150 bytes with the map's overhead, so the table stays under 2 MB
// whatever the number of source addresses. Entries leave when their window and lock are over.
//
// When the table is full of live entries, a client it does not hold is counted in one shared
// "overflow" entry instead: during a guessing attack from more than MaxTrackedClients
// addresses, all the addresses the table cannot hold share one count and one lock. That costs
// the operator sign-ins from new addresses until the attack's entries expire, but never lets
// an attacker with many addresses flush the table to guess without limit.
const MaxTrackedClients = 10000

// sweepEvery is how often, at most, a full table is swept for expired entries (a sweep visits
// every entry, so a flood of new addresses must not trigger one per request).
const sweepEvery = time.Second

// throttle counts wrong admin tokens per client address and locks an address that sent too
// many. It is shared by the admin API and the console sign-in: guessing through either is the
// same attack. It lives in memory: a restart clears every count and lock.
type throttle struct {
	maxWrong int
	window   time.Duration
	lock     time.Duration
	capacity int
	now      func() time.Time

	mu        sync.Mutex
	clients   map[netip.Prefix]tally
	overflow  tally
	lastSweep time.Time

	stats ThrottleStats
}

// tally is one client's wrong tokens in its current window, and its lock.
type tally struct {
	windowStart time.Time
	wrong       int
	lockedUntil time.Time
}

// expired reports whether the tally holds nothing any more at now: its window and its lock
// are over.
func (t tally) expired(now time.Time, window time.Duration) bool {
	return !now.Before(t.windowStart.Add(window)) && !now.Before(t.lockedUntil)
}

// ThrottleStats count the admin token throttle's decisions since start (for /metrics).
type ThrottleStats struct {
	// WrongTokens are wrong admin tokens (empty ones are not counted).
	WrongTokens atomic.Uint64
	// LockedRefusals are requests refused because their address was locked.
	LockedRefusals atomic.Uint64
	// Locks are locks started.
	Locks atomic.Uint64
}

func newThrottle(maxWrong int, window, lock time.Duration, capacity int, now func() time.Time) *throttle {
	return &throttle{
		maxWrong: maxWrong, window: window, lock: lock, capacity: capacity, now: now,
		clients: make(map[netip.Prefix]tally),
	}
}

// clientKey is what one client counts as: an IPv4 address, or an IPv6 /64 (one host usually
// holds a whole /64, so counting single IPv6 addresses would give it 2^64 tries).
func clientKey(a netip.Addr) netip.Prefix {
	a = a.Unmap()
	if a.Is6() {
		p, _ := a.Prefix(64)
		return p
	}
	return netip.PrefixFrom(a, a.BitLen())
}

// verdict is the outcome of one check.
type verdict struct {
	// retryAfter is positive when the client is locked: refused whatever the token, which
	// was neither compared nor counted.
	retryAfter time.Duration
	// counted is set when the request counted as a wrong token.
	counted bool
	// lockedNow is set when this wrong token started the lock (log it once).
	lockedNow bool
	// shared is set when the client was counted in the overflow entry.
	shared bool
}

// check runs wrong (the token comparison: is this a wrong guess?) for a request from client
// unless client is locked, and counts a wrong guess. The comparison runs under the throttle's
// lock so that concurrent guesses from one address cannot all slip past the count (it takes
// about a microsecond: a SHA-256 and a constant-time compare).
func (t *throttle) check(client netip.Addr, wrong func() bool) (v verdict) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	key := clientKey(client)
	tl, tracked := t.clients[key]
	if !tracked && len(t.clients) >= t.capacity {
		t.sweep(now)
	}
	v.shared = !tracked && len(t.clients) >= t.capacity
	if v.shared {
		tl = t.overflow
	}
	if now.Before(tl.lockedUntil) {
		t.stats.LockedRefusals.Add(1)
		v.retryAfter = tl.lockedUntil.Sub(now)
		return v
	}
	if !wrong() {
		return v
	}
	v.counted = true
	t.stats.WrongTokens.Add(1)
	if !now.Before(tl.windowStart.Add(t.window)) {
		tl = tally{windowStart: now}
	}
	tl.wrong++
	if tl.wrong >= t.maxWrong {
		tl = tally{windowStart: now, lockedUntil: now.Add(t.lock)}
		t.stats.Locks.Add(1)
		v.lockedNow = true
	}
	if v.shared {
		t.overflow = tl
	} else {
		t.clients[key] = tl
	}
	return v
}

// sweep drops the expired entries of a full table, at most once per sweepEvery.
func (t *throttle) sweep(now time.Time) {
	if now.Sub(t.lastSweep) < sweepEvery && !now.Before(t.lastSweep) {
		return
	}
	t.lastSweep = now
	for k, tl := range t.clients {
		if tl.expired(now, t.window) {
			delete(t.clients, k)
		}
	}
}

// size is the number of addresses held (tests).
func (t *throttle) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.clients)
}
