package store

import (
	bolt "go.etcd.io/bbolt"
)

// UpdateRecords is UpdateRecord for several emails of one app in one write transaction, so one
// commit (one fsync) instead of one per email. fn is called once per email, in order, with the
// index of the email; an error from fn aborts the whole transaction (nothing is written). It
// returns the records as stored afterwards, in the order of emails. Emails should be distinct:
// a repeated email sees the record as fn left it for the earlier position.
//
// Like UpdateRecord, concurrent calls share one commit and fn may run twice.
func (s *Store) UpdateRecords(appID []byte, emails []string, fn func(i int, r *Record, exists bool) (write bool, err error)) ([]Record, error) {
	out := make([]Record, len(emails))
	seqs := make([]uint64, len(emails))
	var txid uint64
	err := s.group.update(func(tx *bolt.Tx) error {
		now := s.now().UTC()
		txid = uint64(tx.ID())
		for i, email := range emails {
			var err error
			out[i], seqs[i], err = s.updateOne(tx, now, appID, email, func(r *Record, exists bool) (bool, error) {
				return fn(i, r, exists)
			})
			if err != nil {
				if i > 0 {
					return unwrapClean(err) // earlier emails were written: the transaction must roll back
				}
				return err
			}
		}
		return nil
	})
	if err != nil {
		s.cache.forget(appID, emails...)
		return nil, err
	}
	s.cache.written(txid, out, seqs)
	return out, nil
}
