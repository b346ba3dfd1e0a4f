package store

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Verification codes, in the codes bucket. Every key starts with the 32-byte app ID (DeleteApp
// removes an app's codes by prefix), then a kind byte:
//
//	appID || 'c' || addrKey(32) || id(8)              code: issuedAt(8) expiresAt(8) deleteAt(8) mac(32) sealed code(rest)
//	appID || 'u' || addrKey(32) || id(8)              used code: mac(32)
//	appID || 'x' || deleteAt(8) || addrKey(32) || id(8)  expiry index (empty value), swept by SweepCodes
//
// A code used up leaves its 'c' entry for a 'u' entry under the same id, with only its MAC, until
// the code's deleteAt: the same code sent again (a client retrying after a lost answer) is then
// told apart from a wrong code, and is not counted as one. Its index entry stays and sweeps it.
//
// Times are big-endian Unix nanoseconds; id is the bucket's sequence, so an address's codes scan
// oldest first. addrKey is a SHA-256 of the address: the codes bucket holds no address in clear.
// The code itself is kept only as the caller's MAC, plus, for test-mode apps, sealed (so the
// /code route can return it).
const (
	kindCode  = 'c'
	kindUsed  = 'u'
	kindIndex = 'x' // the largest kind byte (SweepCodes relies on it)
	macSize   = sha256.Size
)

// Errors of UseCode, beside ErrNotFound (no code pending for the address) and *ThrottleError.
var (
	// ErrCodeMismatch: the code matches none of the address's codes (counted as a wrong code).
	ErrCodeMismatch = errors.New("store: verification code does not match")
	// ErrCodeExpired: the code matches one of the address's codes, which has expired.
	ErrCodeExpired = errors.New("store: verification code expired")
	// ErrCodeUsed: the code matches one the address already used up (not counted as a wrong
	// code); it answers so until the code's retention ends.
	ErrCodeUsed = errors.New("store: verification code already used")
)

// Code is a stored verification code.
type Code struct {
	ID uint64
	// MAC is the caller's MAC of the code (HMAC-SHA256, 32 bytes); UseCode compares it.
	MAC []byte
	// Plain is the code itself, kept (sealed) for test-mode apps only; "" otherwise.
	Plain     string
	IssuedAt  time.Time
	ExpiresAt time.Time
}

// Issue is a code to store, and the conditions to store it under.
type Issue struct {
	AppID []byte
	// Email is the normalised address.
	Email string
	// MAC is the code's MAC (32 bytes). Plain is the code, for test-mode apps only.
	MAC   []byte
	Plain string
	// TTL is how long the code is valid; Retain how long it is kept after that, so that using
	// it answers ErrCodeExpired rather than ErrCodeMismatch.
	TTL    time.Duration
	Retain time.Duration
	// Keep is how many codes an address keeps: the oldest beyond it are deleted.
	Keep int
	// Limits, when not nil, are checked (and consumed) in the same transaction, with the
	// address's wrong-code lock (Attempts).
	Limits   *SendLimits
	Attempts AttemptLimits
}

// addrKey is the fixed-size key of an address in the codes and throttle buckets.
func addrKey(email string) []byte {
	h := sha256.Sum256([]byte("idvault address\x00" + email))
	return h[:]
}

func codePrefix(appID, addr []byte) []byte {
	k := make([]byte, 0, len(appID)+1+len(addr)+8)
	return append(append(append(k, appID...), kindCode), addr...)
}

func codeKey(appID, addr []byte, id uint64) []byte {
	return binary.BigEndian.AppendUint64(codePrefix(appID, addr), id)
}

func usedKey(appID, addr []byte, id uint64) []byte {
	k := make([]byte, 0, len(appID)+1+len(addr)+8)
	k = append(append(append(k, appID...), kindUsed), addr...)
	return binary.BigEndian.AppendUint64(k, id)
}

func indexKey(appID []byte, deleteAt time.Time, addr []byte, id uint64) []byte {
	k := make([]byte, 0, len(appID)+1+8+len(addr)+8)
	k = append(append(k, appID...), kindIndex)
	k = binary.BigEndian.AppendUint64(k, unixNano(deleteAt))
	k = append(k, addr...)
	return binary.BigEndian.AppendUint64(k, id)
}

// storedCode is a code as read from the bucket, with what deleting it needs.
type storedCode struct {
	Code
	key      []byte
	deleteAt time.Time
	sealed   []byte
}

func decodeCode(k, v []byte) (storedCode, error) {
	if len(v) < 24+macSize || len(k) < 8 {
		return storedCode{}, errors.New("store: corrupt verification code")
	}
	return storedCode{
		Code: Code{
			ID:        binary.BigEndian.Uint64(k[len(k)-8:]),
			MAC:       append([]byte(nil), v[24:24+macSize]...),
			IssuedAt:  fromNano(binary.BigEndian.Uint64(v)),
			ExpiresAt: fromNano(binary.BigEndian.Uint64(v[8:])),
		},
		key:      append([]byte(nil), k...),
		deleteAt: fromNano(binary.BigEndian.Uint64(v[16:])),
		sealed:   append([]byte(nil), v[24+macSize:]...),
	}, nil
}

// addressCodes returns the codes of one address, oldest first.
func addressCodes(tx *bolt.Tx, appID, addr []byte) ([]storedCode, error) {
	prefix := codePrefix(appID, addr)
	var out []storedCode
	c := tx.Bucket(bucketCodes).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		sc, err := decodeCode(k, v)
		if err != nil {
			return nil, err
		}
		out = append(out, sc)
	}
	return out, nil
}

// deleteCode removes a code and its index entry.
func deleteCode(tx *bolt.Tx, appID, addr []byte, sc storedCode) error {
	b := tx.Bucket(bucketCodes)
	if err := b.Delete(sc.key); err != nil {
		return err
	}
	return b.Delete(indexKey(appID, sc.deleteAt, addr, sc.ID))
}

// useUp replaces a code by its used entry (its MAC under the same id); the index entry stays, so
// that SweepCodes deletes the used entry when the code's retention ends.
func useUp(tx *bolt.Tx, appID, addr []byte, sc storedCode) error {
	b := tx.Bucket(bucketCodes)
	if err := b.Delete(sc.key); err != nil {
		return err
	}
	return b.Put(usedKey(appID, addr, sc.ID), sc.MAC)
}

// usedBefore reports whether mac is the MAC of a code the address used up (every used entry is
// compared, in constant time).
func usedBefore(tx *bolt.Tx, appID, addr, mac []byte) bool {
	prefix := usedKey(appID, addr, 0)
	prefix = prefix[:len(prefix)-8]
	found := false
	c := tx.Bucket(bucketCodes).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if hmac.Equal(v, mac) {
			found = true
		}
	}
	return found
}

// errMACSize refuses a code whose MAC is not 32 bytes (checked before any transaction).
var errMACSize = errors.New("store: verification code MAC must be 32 bytes")

// Code writes (IssueCode, TestCode, UseCode, WithdrawCode, WithdrawSend) go through the store's
// group commit, as identity records do: a lone request commits at once, concurrent ones share a
// commit. Each function given to it may therefore run twice (when another write of its group
// fails, the group rolls back and every write is retried alone), so each one resets its results
// when it starts, decides only from what it reads in its transaction, and reports refusals
// (throttled, wrong code...) as values with a nil error, so that what they write (a wrong-code
// count) commits. An error returned before the function wrote anything is wrapped by clean: that
// write fails alone and its group commits; an error after a write rolls the group back.

// putCode stores a new code for in (whose MAC has been checked), and deletes the address's
// oldest codes beyond in.Keep. Its errors come after a write (the sequence): never clean.
func (s *Store) putCode(tx *bolt.Tx, in Issue, addr []byte, now time.Time) (Code, error) {
	b := tx.Bucket(bucketCodes)
	id, err := b.NextSequence()
	if err != nil {
		return Code{}, err
	}
	c := Code{ID: id, MAC: append([]byte(nil), in.MAC...), Plain: in.Plain, IssuedAt: now, ExpiresAt: now.Add(in.TTL)}
	deleteAt := c.ExpiresAt.Add(in.Retain)
	key := codeKey(in.AppID, addr, id)
	v := binary.BigEndian.AppendUint64(nil, unixNano(c.IssuedAt))
	v = binary.BigEndian.AppendUint64(v, unixNano(c.ExpiresAt))
	v = binary.BigEndian.AppendUint64(v, unixNano(deleteAt))
	v = append(v, in.MAC...)
	if in.Plain != "" {
		sealed, err := s.seal.seal([]byte(in.Plain), adFor(bucketCodes, key, "code"))
		if err != nil {
			return Code{}, err
		}
		v = append(v, sealed...)
	}
	if err := b.Put(key, v); err != nil {
		return Code{}, err
	}
	if err := b.Put(indexKey(in.AppID, deleteAt, addr, id), nil); err != nil {
		return Code{}, err
	}
	codes, err := addressCodes(tx, in.AppID, addr)
	if err != nil {
		return Code{}, err
	}
	keep := max(in.Keep, 1)
	for i := 0; i < len(codes)-keep; i++ {
		if err := deleteCode(tx, in.AppID, addr, codes[i]); err != nil {
			return Code{}, err
		}
	}
	return c, nil
}

// writeFunc runs a write transaction: the group commit in production; benchmarks pass other
// write paths (db.Update, db.Batch) to compare.
type writeFunc func(func(*bolt.Tx) error) error

// IssueCode stores a new code. With in.Limits set, it first checks the address's wrong-code lock
// and the send limits, and returns a *ThrottleError (storing nothing, consuming nothing) when one
// refuses. It returns once the code (and what the send consumed) is on disk.
func (s *Store) IssueCode(in Issue) (Code, error) { return s.issueCode(s.group.update, in) }

func (s *Store) issueCode(write writeFunc, in Issue) (Code, error) {
	if len(in.MAC) != macSize {
		return Code{}, fmt.Errorf("store: issue code: %w", errMACSize)
	}
	addr := addrKey(in.Email)
	var out Code
	var refused error
	err := write(func(tx *bolt.Tx) error {
		now := s.now().UTC()
		out, refused = Code{}, nil
		if err := s.deleted.check(in.AppID); err != nil {
			return err
		}
		if in.Limits != nil {
			// admitSend writes nothing when it refuses; its other errors may follow a write.
			err := admitSend(tx, in.AppID, addr, *in.Limits, in.Attempts, now)
			var te *ThrottleError
			if errors.As(err, &te) {
				refused = te
				return nil
			}
			if err != nil {
				return err
			}
		}
		var err error
		out, err = s.putCode(tx, in, addr, now)
		return err
	})
	if err != nil {
		return Code{}, fmt.Errorf("store: issue code: %w", err)
	}
	if refused != nil {
		return Code{}, refused
	}
	return out, nil
}

// TestCode returns the newest unexpired code of (in.AppID, in.Email) that was kept in clear
// (test-mode apps), or, when there is none, stores in (unthrottled) and returns it with
// issued=true.
func (s *Store) TestCode(in Issue) (c Code, issued bool, err error) {
	if len(in.MAC) != macSize {
		return Code{}, false, fmt.Errorf("store: test code: %w", errMACSize)
	}
	addr := addrKey(in.Email)
	err = s.group.update(func(tx *bolt.Tx) error {
		now := s.now().UTC()
		c, issued = Code{}, false
		if err := s.deleted.check(in.AppID); err != nil {
			return err
		}
		codes, err := addressCodes(tx, in.AppID, addr)
		if err != nil {
			return clean(err)
		}
		for i := len(codes) - 1; i >= 0; i-- {
			sc := codes[i]
			if len(sc.sealed) == 0 || !now.Before(sc.ExpiresAt) {
				continue
			}
			plain, err := s.seal.open(sc.sealed, adFor(bucketCodes, sc.key, "code"))
			if err != nil {
				return clean(err)
			}
			c, c.Plain = sc.Code, string(plain)
			return nil
		}
		c, err = s.putCode(tx, in, addr, now)
		issued = true
		return err
	})
	if err != nil {
		return Code{}, false, fmt.Errorf("store: test code: %w", err)
	}
	return c, issued, nil
}

// withdrawCode deletes one code if it is still there. Only its decoding error is clean.
func withdrawCode(tx *bolt.Tx, appID, addr []byte, id uint64) error {
	key := codeKey(appID, addr, id)
	v := tx.Bucket(bucketCodes).Get(key)
	if v == nil {
		return nil
	}
	sc, err := decodeCode(key, v)
	if err != nil {
		return clean(err)
	}
	return deleteCode(tx, appID, addr, sc)
}

// WithdrawCode deletes one code (its mail could not be sent). A code already gone is no error.
func (s *Store) WithdrawCode(appID []byte, email string, id uint64) error {
	addr := addrKey(email)
	err := s.group.update(func(tx *bolt.Tx) error { return withdrawCode(tx, appID, addr, id) })
	if err != nil {
		return fmt.Errorf("store: withdraw code: %w", err)
	}
	return nil
}

// UseCode checks mac against the unexpired codes of (appID, email) and, on a match, uses that
// code up (single use) and clears the address's wrong-code count. Otherwise it returns, in this
// order: a *ThrottleError while the address is locked (even for a right code); ErrCodeExpired
// when mac matches an expired code; ErrCodeUsed when it matches a code already used up;
// ErrNotFound when the address has no code; ErrCodeMismatch otherwise, after counting a wrong
// code (att.MaxWrong of them lock the address for att.Lock).
// MACs are compared in constant time. It returns once the outcome (the code deleted, the wrong
// code counted) is on disk, so of concurrent uses of one code exactly one succeeds.
func (s *Store) UseCode(appID []byte, email string, mac []byte, att AttemptLimits) error {
	addr := addrKey(email)
	var result error
	err := s.group.update(func(tx *bolt.Tx) error {
		now := s.now().UTC()
		result = nil
		if err := s.deleted.check(appID); err != nil {
			return err
		}
		akey := throttleKey(appID, kindAttempts, addr)
		if err := lockError(getAttempts(tx, akey, att, now), now); err != nil {
			result = err
			return nil
		}
		codes, err := addressCodes(tx, appID, addr)
		if err != nil {
			return clean(err)
		}
		match, expired := -1, false
		for i, sc := range codes {
			if hmac.Equal(sc.MAC, mac) {
				if now.Before(sc.ExpiresAt) {
					match = i
				} else {
					expired = true
				}
			}
		}
		switch {
		case match >= 0:
			if err := useUp(tx, appID, addr, codes[match]); err != nil {
				return err
			}
			return tx.Bucket(bucketThrottle).Delete(akey)
		case expired:
			result = ErrCodeExpired
		case usedBefore(tx, appID, addr, mac):
			result = ErrCodeUsed
		case len(codes) == 0:
			result = ErrNotFound
		default:
			// A value, not an error: the wrong code's count must commit.
			result = ErrCodeMismatch
			return recordWrong(tx, akey, att, now)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: use code: %w", err)
	}
	return result
}

// SweepCodes deletes the codes whose retention ended (Issue.Retain after expiry), following the
// expiry index of each app; each transaction deletes at most limit codes. It returns how many it
// deleted.
func (s *Store) SweepCodes(limit int) (int, error) {
	if limit < 1 {
		limit = 1000
	}
	deleted := 0
	for {
		n, more := 0, false
		err := s.update(func(tx *bolt.Tx) error {
			var err error
			n, more, err = s.sweepExpired(tx, limit)
			return err
		})
		deleted += n
		if err != nil {
			return deleted, fmt.Errorf("store: sweep codes: %w", err)
		}
		if !more {
			return deleted, nil
		}
	}
}

// sweepExpired is one transaction of SweepCodes: it deletes in tx at most limit codes whose
// retention ended, app by app. It returns how many it deleted, also when it fails, and whether
// it stopped at limit with some left.
func (s *Store) sweepExpired(tx *bolt.Tx, limit int) (int, bool, error) {
	n := 0
	now := unixNano(s.now())
	b := tx.Bucket(bucketCodes)
	c := b.Cursor()
	// Visit each app's index: jump from one app-ID prefix to the next.
	for k, _ := c.First(); k != nil; {
		if len(k) < 33 {
			k, _ = c.Next()
			continue
		}
		appID := append([]byte(nil), k[:32]...)
		swept, more, err := s.sweepAppExpired(b, c, appID, now, limit-n)
		n += swept
		if err != nil || more {
			return n, more, err
		}
		// Past this app's index ('x' is the largest kind byte): the next app's first key.
		// A key before it (the page's keys out of order) would make the walk go round.
		past := append(append([]byte(nil), appID...), kindIndex+1)
		if k, _ = c.Seek(past); k != nil && bytes.Compare(k, past) < 0 {
			return n, false, damaged(s.Path(), "sweep codes: keys out of order")
		}
	}
	return n, false, nil
}

// sweepAppExpired follows appID's expiry index in b (c its cursor) and deletes the codes whose
// retention ended by now, each with its index entry, at most budget of them. It returns how
// many it deleted, also when it fails, and whether it stopped at budget with some left.
func (s *Store) sweepAppExpired(b *bolt.Bucket, c *bolt.Cursor, appID []byte, now uint64, budget int) (int, bool, error) {
	n := 0
	idx := append(append([]byte(nil), appID...), kindIndex)
	var prev []byte
	for ik, _ := c.Seek(idx); ik != nil && bytes.HasPrefix(ik, idx); ik, _ = c.Seek(idx) {
		if len(ik) != 33+8+macSize+8 || binary.BigEndian.Uint64(ik[33:]) > now {
			break
		}
		if bytes.Equal(ik, prev) {
			// A key still there once deleted is a damaged page: the sweep would
			// delete it again and again.
			return n, false, damaged(s.Path(), "sweep codes: a deleted key is still there")
		}
		if n == budget {
			return n, true, nil
		}
		ik = append([]byte(nil), ik...)
		addr, id := ik[41:41+macSize], binary.BigEndian.Uint64(ik[41+macSize:])
		// The code, or its used entry: one of the two is there.
		if err := b.Delete(codeKey(appID, addr, id)); err != nil {
			return n, false, err
		}
		if err := b.Delete(usedKey(appID, addr, id)); err != nil {
			return n, false, err
		}
		if err := b.Delete(ik); err != nil {
			return n, false, err
		}
		n++
		prev = ik
	}
	return n, false, nil
}
