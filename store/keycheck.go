package store

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// The meta bucket's "key_check" is a fixed text sealed under the master key the data file was
// created with. Open checks it, so that a data file never runs under another key: every secret in
// it would fail to open (each read an internal error), and every new write would be sealed under
// the new key, leaving a file that no single key opens.
var keyCheckKey = []byte("key_check")

const keyCheckText = "idvault master key check v1"

// checkMasterKey runs in the transaction that opens the file. With a key check, the key must
// open it. Without one (a new file, or one written before the check existed), the first app's
// sealed secret must open if there is an app, and the check is then written.
func (s *Store) checkMasterKey(tx *bolt.Tx) error {
	meta := tx.Bucket(bucketMeta)
	ad := adFor(bucketMeta, keyCheckKey, "check")
	if v := meta.Get(keyCheckKey); v != nil {
		if p, err := s.seal.open(v, ad); err != nil || string(p) != keyCheckText {
			return ErrWrongMasterKey
		}
		return nil
	}
	// The first app whose record decodes tells (a damaged record is left to its own reads).
	c := tx.Bucket(bucketApps).Cursor()
	for id, v := c.First(); id != nil; id, v = c.Next() {
		_, err := s.decodeApp(id, v)
		if errors.Is(err, ErrSealed) {
			return ErrWrongMasterKey
		}
		if err == nil {
			break
		}
	}
	sealed, err := s.seal.seal([]byte(keyCheckText), ad)
	if err != nil {
		return err
	}
	if err := meta.Put(keyCheckKey, sealed); err != nil {
		return fmt.Errorf("store: write key check: %w", err)
	}
	return nil
}
