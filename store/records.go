package store

import (
	"encoding/binary"
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
	// PublicPermanent and PublicProvisional are the public identities of the two, stored
	// beside them when they are created so that reads need not derive them. They are "" for
	// an identity stored before idvault kept them (see Publics): derive it from the private one.
	PublicPermanent   string
	PublicProvisional string
	Registered        bool
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

func recordKey(appID []byte, email string) []byte {
	k := make([]byte, 0, len(appID)+len(email))
	return append(append(k, appID...), email...)
}

// Record returns the record of (appID, email), or ErrNotFound. email must be normalised.
func (s *Store) Record(appID []byte, email string) (Record, error) {
	r, _, err := s.readRecord(appID, email, true)
	return r, err
}

// PrivateRecord is Record without the public identities (left ""): for a read that answers
// with the private identities only, and need not unseal the public ones.
//
// A record read or written before is answered from the record cache (see recordCache).
func (s *Store) PrivateRecord(appID []byte, email string) (Record, error) {
	if r, ok := s.cache.private(appID, email); ok {
		return cachedPrivate(appID, email, r), nil
	}
	r, txid, err := s.readRecord(appID, email, false)
	if err == nil {
		s.cache.fillPrivate(txid, appID, email, r)
	}
	return r, err
}

// readRecord is getRecord in a read transaction of its own, whose ID it returns.
func (s *Store) readRecord(appID []byte, email string, public bool) (Record, uint64, error) {
	var r Record
	var txid uint64
	err := s.view(func(tx *bolt.Tx) error {
		var err error
		txid = uint64(tx.ID())
		r, err = s.getRecord(tx, appID, email, public)
		return err
	})
	return r, txid, err
}

// getRecord reads and unseals a record; public=false leaves its public identities sealed.
func (s *Store) getRecord(tx *bolt.Tx, appID []byte, email string, public bool) (Record, error) {
	key := recordKey(appID, email)
	v := tx.Bucket(bucketRecords).Get(key)
	if v == nil {
		return Record{}, ErrNotFound
	}
	d, err := decodeRecord(v)
	if err != nil {
		return Record{}, damaged(s.db.Path(), err)
	}
	r := Record{
		AppID: append([]byte(nil), appID...), Email: email, UserID: string(d.userID),
		Registered: d.registered, CreatedAt: d.createdAt, UpdatedAt: d.updatedAt,
	}
	fields := []struct {
		sealed []byte
		name   string
		out    *string
	}{
		{d.permanent, "permanent", &r.PermanentIdentity},
		{d.provisional, "provisional", &r.ProvisionalIdentity},
		{d.publicPermanent, "public permanent", &r.PublicPermanent},
		{d.publicProvisional, "public provisional", &r.PublicProvisional},
	}
	if !public {
		fields = fields[:2]
	}
	var plain []byte // reused, wiped at the end
	defer func() { clear(plain[:cap(plain)]) }()
	for _, f := range fields {
		if *f.out, plain, err = s.openIdentity(plain, f.sealed, adFor(bucketRecords, key, f.name), d.packed); err != nil {
			return Record{}, fmt.Errorf("store: record %s identity: %w", f.name, err)
		}
	}
	return r, nil
}

// UpdateRecord reads the record of (appID, email) inside one write transaction, passes it to fn
// (exists=false and a zero Record with AppID and Email set when there is none), and stores the
// record fn leaves if fn returns write=true. It returns the record as stored afterwards.
//
// fn runs while the single bbolt writer lock is held: it must be quick and do no I/O; expensive
// work (key generation) belongs before the call, with fn only deciding whether to use it. This is
// what makes "concurrent requests for one new email create exactly one identity" hold.
//
// Concurrent calls share one commit (see groupCommit), so fn may run twice (it must decide from
// the record it is given); UpdateRecord returns only once the record is on disk.
func (s *Store) UpdateRecord(appID []byte, email string, fn func(r *Record, exists bool) (write bool, err error)) (Record, error) {
	var out Record
	var txid, seq uint64
	err := s.group.update(func(tx *bolt.Tx) error {
		var err error
		txid = uint64(tx.ID())
		out, seq, err = s.updateOne(tx, s.now().UTC(), appID, email, fn)
		return err
	})
	if err != nil {
		s.cache.forget(appID, email)
		return out, err
	}
	s.cache.written(txid, []Record{out}, []uint64{seq})
	return out, nil
}

// updateOne is one record's read-decide-write inside tx. seq is the record's write sequence
// for the record cache (see cacheVersion), 0 when the record it returns is not in the file (it
// neither existed nor was written). Errors before the write are clean (nothing written), so the
// rest of a shared transaction can still commit.
func (s *Store) updateOne(tx *bolt.Tx, now time.Time, appID []byte, email string, fn func(r *Record, exists bool) (bool, error)) (r Record, seq uint64, err error) {
	if err := s.deleted.check(appID); err != nil {
		return Record{}, 0, err
	}
	r, err = s.getRecord(tx, appID, email, true)
	exists := err == nil
	if err != nil && err != ErrNotFound {
		return Record{}, 0, clean(err)
	}
	if !exists {
		r = Record{AppID: append([]byte(nil), appID...), Email: email}
	}
	write, err := fn(&r, exists)
	if err != nil {
		return Record{}, 0, clean(err)
	}
	if write {
		if !exists {
			r.CreatedAt = now
		}
		r.UpdatedAt = now
		if err := s.putRecord(tx, r); err != nil {
			return Record{}, 0, err
		}
	}
	if exists || write {
		seq = s.writeSeq.Add(1)
	}
	return r, seq, nil
}

// putRecord packs and seals the record's identities and stores it. Each identity is sealed
// straight into the record's value (one buffer for the whole record, one associated-data buffer
// and one packing buffer reused, the packing buffer wiped at the end).
func (s *Store) putRecord(tx *bolt.Tx, r Record) error {
	key := recordKey(r.AppID, r.Email)
	fields := [...]struct{ clear, name string }{
		{r.PermanentIdentity, "permanent"},
		{r.ProvisionalIdentity, "provisional"},
		{r.PublicPermanent, "public permanent"},
		{r.PublicProvisional, "public provisional"},
	}
	size := recordHeaderSize + 5*binary.MaxVarintLen64 + len(r.UserID)
	largest := 0
	for _, f := range fields {
		size += sealedSize(len(f.clear) + 1)
		largest = max(largest, len(f.clear))
	}
	// Made for the largest identity (packing takes at most one byte more), so never regrown with
	// an identity in it.
	packed := make([]byte, 0, largest+1)
	defer func() { clear(packed[:cap(packed)]) }()
	out := appendRecordHeader(make([]byte, 0, size), r.Registered, r.CreatedAt, r.UpdatedAt)
	out = appendRecordField(out, []byte(r.UserID))
	ad := make([]byte, 0, len(bucketRecords)+len(key)+len("public provisional")+2)
	for _, f := range fields {
		if f.clear == "" {
			out = appendRecordField(out, nil)
			continue
		}
		if s.noPack {
			packed = packRawIdentity(packed[:0], f.clear)
		} else {
			packed = packIdentity(packed[:0], f.clear)
		}
		out = binary.AppendUvarint(out, uint64(sealedSize(len(packed))))
		ad = appendAD(ad[:0], bucketRecords, key, f.name)
		var err error
		if out, err = s.seal.appendSeal(out, packed, ad); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketRecords).Put(key, out)
}

// CountRecords returns how many identity records an app has (admin views, metrics).
func (s *Store) CountRecords(appID []byte) (int, error) {
	n := 0
	err := s.view(func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketRecords).Cursor()
		for k, _ := c.Seek(appID); k != nil && hasPrefix(k, appID); k, _ = c.Next() {
			n++
		}
		return nil
	})
	return n, err
}
