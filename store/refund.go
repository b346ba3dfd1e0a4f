package store

import (
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"
)

// WithdrawSend undoes a send whose mail never left: it deletes the code (as WithdrawCode) and
// gives back what IssueCode consumed from lim, in one transaction: one count of the address's
// and of the app's send windows (when the window that counted it is still open) and one token of
// the client IP's bucket. Wrong-code counts and locks are never given back.
func (s *Store) WithdrawSend(appID []byte, email string, id uint64, lim SendLimits) error {
	addr := addrKey(email)
	err := s.group.update(func(tx *bolt.Tx) error { // see codes.go on the group commit
		now := s.now().UTC()
		if err := s.deleted.check(appID); err != nil {
			return err
		}
		// withdrawCode comes first: its clean error (nothing written) stays clean.
		if err := withdrawCode(tx, appID, addr, id); err != nil {
			return err
		}
		b := tx.Bucket(bucketThrottle)
		giveBack := func(key []byte, w Window) error {
			win := getWindow(tx, key)
			if w.Max <= 0 || w.Per <= 0 || win.count == 0 || !now.Before(win.start.Add(w.Per)) {
				return nil
			}
			win.count--
			return b.Put(key, win.encode(w))
		}
		if err := giveBack(throttleKey(appID, kindAddrWindow, addr), lim.Address); err != nil {
			return err
		}
		if err := giveBack(throttleKey(appID, kindAppWindow, nil), lim.App); err != nil {
			return err
		}
		if lim.IP.PerSecond > 0 && lim.IP.Burst > 0 && lim.ClientIP.IsValid() {
			key := ipBucketKey(appID, lim)
			bk := getBucket(tx, key, lim.IP)
			if !bk.updated.IsZero() && now.After(bk.updated) {
				bk.tokens += now.Sub(bk.updated).Seconds() * lim.IP.PerSecond
			}
			bk.tokens = math.Min(float64(lim.IP.Burst), bk.tokens+1)
			bk.updated = now
			if err := b.Put(key, bk.encode(lim.IP)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: withdraw send: %w", err)
	}
	return nil
}

// ipBucketKey is the throttle key of the client IP's token bucket: the address, or for IPv6 its
// network of lim.IPv6Prefix bits.
func ipBucketKey(appID []byte, lim SendLimits) []byte {
	addr := lim.ClientIP.Unmap()
	if addr.Is6() && lim.IPv6Prefix > 0 && lim.IPv6Prefix < 128 {
		if p, err := addr.Prefix(lim.IPv6Prefix); err == nil {
			addr = p.Addr()
		}
	}
	ip := addr.As16()
	return throttleKey(appID, kindIPBucket, ip[:])
}
