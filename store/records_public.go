package store

import (
	"bytes"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Public is what a public identity lookup needs from a record: which identities it has, whether
// it is registered, and their public identities. It never holds a private identity.
type Public struct {
	Found                        bool
	HasPermanent, HasProvisional bool
	Registered                   bool
	// PublicPermanent and PublicProvisional are "" when the identity is absent, or when it was
	// stored before idvault kept public identities (then Has* is true: read the Record and
	// derive).
	PublicPermanent, PublicProvisional string
}

// Public is the Public of a found record r.
func (r Record) Public() Public {
	return Public{
		Found: true, HasPermanent: r.PermanentIdentity != "", HasProvisional: r.ProvisionalIdentity != "",
		Registered: r.Registered, PublicPermanent: r.PublicPermanent, PublicProvisional: r.PublicProvisional,
	}
}

// Publics returns the Public of each email of one app, in order, in one read transaction. Only
// the public identities are unsealed: the private ones stay sealed.
//
// Records read or written before are answered from the record cache (see recordCache); only the
// others are read, and then cached.
func (s *Store) Publics(appID []byte, emails []string) ([]Public, error) {
	out := make([]Public, len(emails))
	if missing := s.cache.publics(appID, emails, out); len(missing) > 0 {
		if err := s.readPublics(appID, emails, missing, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readPublics sets out[i] to the Public of emails[i] for each position i of missing, read in
// one read transaction, and caches them.
func (s *Store) readPublics(appID []byte, emails []string, missing []int, out []Public) error {
	var txid uint64
	err := s.view(func(tx *bolt.Tx) error {
		txid = uint64(tx.ID())
		c := tx.Bucket(bucketRecords).Cursor() // one cursor for every lookup: no allocation per email
		key := make([]byte, 0, len(appID)+64)
		var ad, plain []byte // reused: allocations per identity are its string and, packed, its unpacking
		open := func(sealed []byte, field string, packed bool) (string, error) {
			ad = appendAD(ad[:0], bucketRecords, key, field)
			var id string
			var err error
			if id, plain, err = s.openIdentity(plain, sealed, ad, packed); err != nil {
				return "", fmt.Errorf("store: record %s identity: %w", field, err)
			}
			return id, nil
		}
		for _, i := range missing {
			key = append(append(key[:0], appID...), emails[i]...)
			k, v := c.Seek(key)
			if !bytes.Equal(k, key) {
				continue
			}
			d, err := decodeRecord(v)
			if err != nil {
				return damaged(s.db.Path(), err)
			}
			p := Public{Found: true, HasPermanent: len(d.permanent) > 0, HasProvisional: len(d.provisional) > 0, Registered: d.registered}
			if p.PublicPermanent, err = open(d.publicPermanent, "public permanent", d.packed); err != nil {
				return err
			}
			if p.PublicProvisional, err = open(d.publicProvisional, "public provisional", d.packed); err != nil {
				return err
			}
			out[i] = p
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.cache.fillPublics(txid, appID, emails, missing, out)
	return nil
}
