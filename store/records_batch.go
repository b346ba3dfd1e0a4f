package store

import (
	bolt "go.etcd.io/bbolt"
)

// UpdateRecords is UpdateRecord for several emails of one app in one write transaction, so one
// commit (one fsync) instead of one per email. fn is called once per email, in order, with the
// index of the email; an error from fn aborts the whole transaction (nothing is written). It
// returns the records as stored afterwards, in the order of emails. Emails should be distinct:
// a repeated email sees the record as fn left it for the earlier position.
func (s *Store) UpdateRecords(appID []byte, emails []string, fn func(i int, r *Record, exists bool) (write bool, err error)) ([]Record, error) {
	out := make([]Record, len(emails))
	err := s.db.Update(func(tx *bolt.Tx) error {
		now := s.now().UTC()
		for i, email := range emails {
			r, err := s.getRecord(tx, appID, email)
			exists := err == nil
			if err != nil && err != ErrNotFound {
				return err
			}
			if !exists {
				r = Record{AppID: append([]byte(nil), appID...), Email: email}
			}
			write, err := fn(i, &r, exists)
			if err != nil {
				return err
			}
			if write {
				if !exists {
					r.CreatedAt = now
				}
				r.UpdatedAt = now
				if err := s.putRecord(tx, r); err != nil {
					return err
				}
			}
			out[i] = r
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}
