package store

import "bytes"

// Draft holds a record's identities sealed before its write (SealDraft), so that sealing them
// is not part of the shared commit: every write of a group commit runs in its leader, one after
// the other, while the other writers wait, so each sealing done there lengthens the commit for
// all of them. A write whose function stores an identity equal to the draft's copies the sealed
// form instead of sealing it again; any other value is sealed in the commit as before.
//
// A sealed identity is bound to its record's key and field (its associated data), so a Draft is
// used only for the (app, email) it was made for. It holds the clear identities it was made
// from (as the caller does) and their sealed forms: nothing the record in the file does not.
type Draft struct {
	key    []byte
	clear  [len(recordFieldNames)]string
	sealed [len(recordFieldNames)][]byte
}

// SealDraft seals the identities of r (those not "") for the record of (appID, email), outside
// any transaction. Only the identities count: r's other fields are ignored.
func (s *Store) SealDraft(appID []byte, email string, r Record) (*Draft, error) {
	d := &Draft{key: recordKey(appID, email), clear: recordFields(r)}
	for i, clear := range d.clear {
		if clear == "" {
			continue
		}
		sealed, err := s.seal.appendSeal(make([]byte, 0, sealedSize(len(clear))), clear, adFor(bucketRecords, d.key, recordFieldNames[i]))
		if err != nil {
			return nil, err
		}
		d.sealed[i] = sealed
	}
	return d, nil
}

// sealedFor returns the sealed form of clear for field i of the record at key, when d (which may be
// nil) was made for that record with that value.
func (d *Draft) sealedFor(key []byte, i int, clear string) ([]byte, bool) {
	if d == nil || d.sealed[i] == nil || d.clear[i] != clear || !bytes.Equal(d.key, key) {
		return nil, false
	}
	return d.sealed[i], true
}
