package store

import (
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Record is the identity record of one (app, email): what the fake authentication server and
// the reference identity server share. Identities are held in clear here and sealed on disk.
type Record struct {
	AppID []byte
	Email string
	// UserID is the clear user ID (a random UUID) hashed into the permanent identity.
	UserID string
	// PermanentIdentity is the b64 secret permanent identity, "" until created.
	PermanentIdentity string
	// ProvisionalIdentity is the b64 secret provisional identity (target email), "" if none.
	ProvisionalIdentity string
	Registered          bool
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

type recordDisk struct {
	UserID      string    `json:"user_id,omitempty"`
	Permanent   []byte    `json:"permanent,omitempty"`
	Provisional []byte    `json:"provisional,omitempty"`
	Registered  bool      `json:"registered"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

func recordKey(appID []byte, email string) []byte {
	k := make([]byte, 0, len(appID)+len(email))
	return append(append(k, appID...), email...)
}

// Record returns the record of (appID, email), or ErrNotFound. email must be normalised.
func (s *Store) Record(appID []byte, email string) (Record, error) {
	var r Record
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		r, err = s.getRecord(tx, appID, email)
		return err
	})
	return r, err
}

func (s *Store) getRecord(tx *bolt.Tx, appID []byte, email string) (Record, error) {
	key := recordKey(appID, email)
	v := tx.Bucket(bucketRecords).Get(key)
	if v == nil {
		return Record{}, ErrNotFound
	}
	var d recordDisk
	if err := json.Unmarshal(v, &d); err != nil {
		return Record{}, fmt.Errorf("store: decode record: %w", err)
	}
	perm, err := s.seal.openString(d.Permanent, adFor(bucketRecords, key, "permanent"))
	if err != nil {
		return Record{}, fmt.Errorf("store: record permanent identity: %w", err)
	}
	prov, err := s.seal.openString(d.Provisional, adFor(bucketRecords, key, "provisional"))
	if err != nil {
		return Record{}, fmt.Errorf("store: record provisional identity: %w", err)
	}
	return Record{
		AppID: append([]byte(nil), appID...), Email: email, UserID: d.UserID,
		PermanentIdentity: perm, ProvisionalIdentity: prov, Registered: d.Registered,
		CreatedAt: d.CreatedAt, UpdatedAt: d.UpdatedAt,
	}, nil
}

// UpdateRecord reads the record of (appID, email) inside one write transaction, passes it to fn
// (exists=false and a zero Record with AppID and Email set when there is none), and stores the
// record fn leaves if fn returns write=true. It returns the record as stored afterwards.
//
// fn runs while the single bbolt writer lock is held: it must be quick and do no I/O; expensive
// work (key generation) belongs before the call, with fn only deciding whether to use it. This is
// what makes "concurrent requests for one new email create exactly one identity" hold.
func (s *Store) UpdateRecord(appID []byte, email string, fn func(r *Record, exists bool) (write bool, err error)) (Record, error) {
	var out Record
	err := s.db.Update(func(tx *bolt.Tx) error {
		r, err := s.getRecord(tx, appID, email)
		exists := err == nil
		if err != nil && err != ErrNotFound {
			return err
		}
		if !exists {
			r = Record{AppID: append([]byte(nil), appID...), Email: email}
		}
		write, err := fn(&r, exists)
		if err != nil {
			return err
		}
		if write {
			now := s.now().UTC()
			if !exists {
				r.CreatedAt = now
			}
			r.UpdatedAt = now
			if err := s.putRecord(tx, r); err != nil {
				return err
			}
		}
		out = r
		return nil
	})
	return out, err
}

func (s *Store) putRecord(tx *bolt.Tx, r Record) error {
	key := recordKey(r.AppID, r.Email)
	perm, err := s.seal.sealString(r.PermanentIdentity, adFor(bucketRecords, key, "permanent"))
	if err != nil {
		return err
	}
	prov, err := s.seal.sealString(r.ProvisionalIdentity, adFor(bucketRecords, key, "provisional"))
	if err != nil {
		return err
	}
	v, err := json.Marshal(recordDisk{
		UserID: r.UserID, Permanent: perm, Provisional: prov, Registered: r.Registered,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	})
	if err != nil {
		return fmt.Errorf("store: encode record: %w", err)
	}
	return tx.Bucket(bucketRecords).Put(key, v)
}

// CountRecords returns how many identity records an app has (admin views, metrics).
func (s *Store) CountRecords(appID []byte) (int, error) {
	n := 0
	err := s.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRecords).Cursor()
		for k, _ := c.Seek(appID); k != nil && hasPrefix(k, appID); k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}
