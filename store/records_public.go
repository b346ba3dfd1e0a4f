package store

import (
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

// Publics returns the Public of each email of one app, in order, in one read transaction. Only
// the public identities are unsealed: the private ones stay sealed.
func (s *Store) Publics(appID []byte, emails []string) ([]Public, error) {
	out := make([]Public, len(emails))
	err := s.db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketRecords)
		key := make([]byte, 0, len(appID)+64)
		for i, email := range emails {
			key = append(append(key[:0], appID...), email...)
			v := b.Get(key)
			if v == nil {
				continue
			}
			d, err := decodeRecord(v)
			if err != nil {
				return err
			}
			p := Public{Found: true, HasPermanent: len(d.permanent) > 0, HasProvisional: len(d.provisional) > 0, Registered: d.registered}
			if p.PublicPermanent, err = s.seal.openString(d.publicPermanent, adFor(bucketRecords, key, "public permanent")); err != nil {
				return fmt.Errorf("store: record public permanent identity: %w", err)
			}
			if p.PublicProvisional, err = s.seal.openString(d.publicProvisional, adFor(bucketRecords, key, "public provisional")); err != nil {
				return fmt.Errorf("store: record public provisional identity: %w", err)
			}
			out[i] = p
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
