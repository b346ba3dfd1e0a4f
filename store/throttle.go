package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Throttling state for the verification API, in the throttle bucket. Every key starts with the
// 32-byte app ID (DeleteApp removes an app's counters by prefix), then a kind byte:
//
//	appID || 'a' || addrKey      wrong-code attempts and lock of one address
//	appID || 's' || addrKey      send window of one address
//	appID || 'S'                 send window of the app
//	appID || 'i' || ip (16)      token bucket of one client IP
//
// addrKey is SHA-256 of the normalised address (see addrKey in codes.go). Every value starts with
// staleAt (big-endian Unix nanoseconds): the time after which the entry holds nothing a later
// decision needs, so SweepThrottle can delete it without decoding the rest.
const (
	kindAttempts   = 'a'
	kindAddrWindow = 's'
	kindAppWindow  = 'S'
	kindIPBucket   = 'i'
)

// Throttle reasons, as reported in ThrottleError.Reason (and used as a metrics label).
const (
	ReasonLocked  = "locked"  // too many wrong codes for the address
	ReasonAddress = "address" // the address's send window is full
	ReasonApp     = "app"     // the app's send window is full
	ReasonIP      = "ip"      // the client IP's token bucket is empty
)

// ErrThrottled is matched (errors.Is) by every *ThrottleError.
var ErrThrottled = errors.New("store: throttled")

// ThrottleError is a refusal by a throttle, with the wait until the request would pass.
type ThrottleError struct {
	Reason     string
	RetryAfter time.Duration
}

func (e *ThrottleError) Error() string {
	return fmt.Sprintf("store: throttled (%s), retry after %s", e.Reason, e.RetryAfter)
}

// Is makes errors.Is(err, ErrThrottled) hold.
func (e *ThrottleError) Is(target error) bool { return target == ErrThrottled }

// Window allows at most Max events per Per. The window opens at the first event after the
// previous window closed (a fixed window anchored on use, so at worst 2*Max events fall in any
// span of length Per, across a window boundary).
type Window struct {
	Max int
	Per time.Duration
}

// Rate is a token bucket: PerSecond tokens refilled per second, up to Burst.
type Rate struct {
	PerSecond float64
	Burst     int
}

// SendLimits are the throttles a send passes through. A zero Window or Rate disables that one.
type SendLimits struct {
	Address Window
	App     Window
	IP      Rate
	// ClientIP is the client the IP bucket applies to; the zero Addr skips the IP bucket.
	ClientIP netip.Addr
	// IPv6Prefix, when between 1 and 127, makes IPv6 clients share one bucket per network of
	// that prefix length (IPv4 clients, and IPv4-mapped ones, always count one address each).
	IPv6Prefix int
}

// AttemptLimits lock an address for Lock after MaxWrong wrong codes. The wrong-code count
// restarts when a code is accepted, when a lock ends, and after Lock without a wrong code.
type AttemptLimits struct {
	MaxWrong int
	Lock     time.Duration
}

func throttleKey(appID []byte, kind byte, rest []byte) []byte {
	k := make([]byte, 0, len(appID)+1+len(rest))
	return append(append(append(k, appID...), kind), rest...)
}

func unixNano(t time.Time) uint64 {
	if t.IsZero() {
		return 0
	}
	return uint64(t.UnixNano())
}

func fromNano(n uint64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, int64(n)).UTC()
}

// attempts is the wrong-code state of one address.
type attempts struct {
	wrong       uint32
	lastWrong   time.Time
	lockedUntil time.Time
}

func (a attempts) encode() []byte {
	stale := a.lockedUntil
	if a.wrong > 0 && a.lastWrong.After(stale) {
		stale = a.lastWrong
	}
	v := binary.BigEndian.AppendUint64(nil, unixNano(stale))
	v = binary.BigEndian.AppendUint32(v, a.wrong)
	v = binary.BigEndian.AppendUint64(v, unixNano(a.lastWrong))
	return binary.BigEndian.AppendUint64(v, unixNano(a.lockedUntil))
}

// getAttempts reads the attempts of an address as they stand at now: an ended lock and an old
// wrong-code count are forgotten.
func getAttempts(tx *bolt.Tx, key []byte, lim AttemptLimits, now time.Time) attempts {
	v := tx.Bucket(bucketThrottle).Get(key)
	if len(v) != 28 {
		return attempts{}
	}
	a := attempts{
		wrong:       binary.BigEndian.Uint32(v[8:]),
		lastWrong:   fromNano(binary.BigEndian.Uint64(v[12:])),
		lockedUntil: fromNano(binary.BigEndian.Uint64(v[20:])),
	}
	if !a.lockedUntil.IsZero() && !now.Before(a.lockedUntil) {
		return attempts{} // the lock ended: start over
	}
	if a.lockedUntil.IsZero() && now.Sub(a.lastWrong) >= lim.Lock {
		a.wrong = 0
	}
	return a
}

// lockError reports a current lock of the address as a ThrottleError, or nil.
func lockError(a attempts, now time.Time) error {
	if a.lockedUntil.After(now) {
		return &ThrottleError{Reason: ReasonLocked, RetryAfter: a.lockedUntil.Sub(now)}
	}
	return nil
}

// recordWrong counts one wrong code and locks the address when the count reaches the limit.
func recordWrong(tx *bolt.Tx, key []byte, lim AttemptLimits, now time.Time) error {
	a := getAttempts(tx, key, lim, now)
	a.wrong++
	a.lastWrong = now
	if int(a.wrong) >= lim.MaxWrong {
		a.lockedUntil = now.Add(lim.Lock)
	}
	return tx.Bucket(bucketThrottle).Put(key, a.encode())
}

// window is the state of a Window: when it opened and how many events it counted.
type window struct {
	start time.Time
	count uint32
}

// admit reports whether one more event fits, the wait when it does not, and the new state.
func (w window) admit(lim Window, now time.Time) (window, time.Duration, bool) {
	if w.start.IsZero() || !now.Before(w.start.Add(lim.Per)) {
		w = window{start: now}
	}
	if int(w.count) >= lim.Max {
		return w, w.start.Add(lim.Per).Sub(now), false
	}
	w.count++
	return w, 0, true
}

func getWindow(tx *bolt.Tx, key []byte) window {
	v := tx.Bucket(bucketThrottle).Get(key)
	if len(v) != 20 {
		return window{}
	}
	return window{start: fromNano(binary.BigEndian.Uint64(v[8:])), count: binary.BigEndian.Uint32(v[16:])}
}

func (w window) encode(lim Window) []byte {
	v := binary.BigEndian.AppendUint64(nil, unixNano(w.start.Add(lim.Per)))
	v = binary.BigEndian.AppendUint64(v, unixNano(w.start))
	return binary.BigEndian.AppendUint32(v, w.count)
}

// bucket is the state of a Rate token bucket.
type bucket struct {
	tokens  float64
	updated time.Time
}

func getBucket(tx *bolt.Tx, key []byte, lim Rate) bucket {
	v := tx.Bucket(bucketThrottle).Get(key)
	if len(v) != 24 {
		return bucket{tokens: float64(lim.Burst)}
	}
	return bucket{
		tokens:  math.Float64frombits(binary.BigEndian.Uint64(v[8:])),
		updated: fromNano(binary.BigEndian.Uint64(v[16:])),
	}
}

// admit refills the bucket to now and takes one token if there is one.
func (b bucket) admit(lim Rate, now time.Time) (bucket, time.Duration, bool) {
	if !b.updated.IsZero() && now.After(b.updated) {
		b.tokens = math.Min(float64(lim.Burst), b.tokens+now.Sub(b.updated).Seconds()*lim.PerSecond)
	}
	b.updated = now
	if b.tokens < 1 {
		wait := time.Duration((1 - b.tokens) / lim.PerSecond * float64(time.Second))
		return b, wait, false
	}
	b.tokens--
	return b, 0, true
}

func (b bucket) encode(lim Rate) []byte {
	full := time.Duration((float64(lim.Burst) - b.tokens) / lim.PerSecond * float64(time.Second))
	v := binary.BigEndian.AppendUint64(nil, unixNano(b.updated.Add(full)))
	v = binary.BigEndian.AppendUint64(v, math.Float64bits(b.tokens))
	return binary.BigEndian.AppendUint64(v, unixNano(b.updated))
}

// admitSend checks the lock and every send limit of (appID, addr) at now, and consumes from all
// of them only when all admit the send. When several refuse, the error names the longest wait.
func admitSend(tx *bolt.Tx, appID, addr []byte, lim SendLimits, att AttemptLimits, now time.Time) error {
	var refused *ThrottleError
	refuse := func(reason string, wait time.Duration) {
		if refused == nil || wait > refused.RetryAfter {
			refused = &ThrottleError{Reason: reason, RetryAfter: wait}
		}
	}
	if err := lockError(getAttempts(tx, throttleKey(appID, kindAttempts, addr), att, now), now); err != nil {
		refuse(ReasonLocked, err.(*ThrottleError).RetryAfter)
	}
	type put struct{ key, value []byte }
	var puts []put
	if lim.Address.Max > 0 && lim.Address.Per > 0 {
		key := throttleKey(appID, kindAddrWindow, addr)
		w, wait, ok := getWindow(tx, key).admit(lim.Address, now)
		if !ok {
			refuse(ReasonAddress, wait)
		}
		puts = append(puts, put{key, w.encode(lim.Address)})
	}
	if lim.App.Max > 0 && lim.App.Per > 0 {
		key := throttleKey(appID, kindAppWindow, nil)
		w, wait, ok := getWindow(tx, key).admit(lim.App, now)
		if !ok {
			refuse(ReasonApp, wait)
		}
		puts = append(puts, put{key, w.encode(lim.App)})
	}
	if lim.IP.PerSecond > 0 && lim.IP.Burst > 0 && lim.ClientIP.IsValid() {
		key := ipBucketKey(appID, lim)
		b, wait, ok := getBucket(tx, key, lim.IP).admit(lim.IP, now)
		if !ok {
			refuse(ReasonIP, wait)
		}
		puts = append(puts, put{key, b.encode(lim.IP)})
	}
	if refused != nil {
		return refused
	}
	b := tx.Bucket(bucketThrottle)
	for _, p := range puts {
		if err := b.Put(p.key, p.value); err != nil {
			return fmt.Errorf("store: put throttle: %w", err)
		}
	}
	return nil
}

// SweepThrottle deletes throttle entries that no longer hold anything (ended windows and locks,
// full token buckets). It scans at most limit entries per transaction and returns how many it
// deleted.
func (s *Store) SweepThrottle(limit int) (int, error) {
	if limit < 1 {
		limit = 1000
	}
	deleted := 0
	var from []byte
	for {
		var next []byte
		err := s.update(func(tx *bolt.Tx) error {
			now := unixNano(s.now())
			c := tx.Bucket(bucketThrottle).Cursor()
			k, v := c.First()
			if from != nil {
				k, v = c.Seek(from)
			}
			for n := 0; k != nil; n++ {
				if n == limit {
					next = append([]byte(nil), k...)
					return nil
				}
				if len(v) >= 8 && binary.BigEndian.Uint64(v) <= now {
					gone := append([]byte(nil), k...)
					if err := c.Delete(); err != nil {
						return err
					}
					deleted++
					// After Delete the cursor may skip an element: seek past the deleted key.
					k, v = c.Seek(gone)
					continue
				}
				k, v = c.Next()
			}
			return nil
		})
		if err != nil {
			return deleted, fmt.Errorf("store: sweep throttle: %w", err)
		}
		if next == nil {
			return deleted, nil
		}
		if from != nil && bytes.Compare(next, from) <= 0 {
			// The walk did not move on (keys out of order): a damaged page, which would
			// make the sweep go round for ever. Outside a transaction: latched here.
			return deleted, s.damage.note(damaged(s.Path(), "sweep throttle: keys out of order"))
		}
		from = next
	}
}
