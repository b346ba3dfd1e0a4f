package directory

import (
	"errors"
	"fmt"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/store"
)

// PublicIdentities returns the public identity of each email under policy, in the order given.
// emails must be normalised; a repeated email is resolved once and answered at each of its
// positions with the same identity.
//
// Public identities are stored beside the private ones when those are created, so a list of
// known emails is one read transaction that unseals one public identity per email: no private
// identity is opened and nothing is derived. The provisional identities that are missing are
// generated first, outside any transaction, then stored in one write transaction (one commit
// for the whole list). As in Permanent, a record that changed meanwhile is answered from what
// is stored, so concurrent requests agree.
//
// Records stored before public identities were kept have none: their public identity is
// derived from the private one once, and stored (derive and cache).
func (d *Directory) PublicIdentities(app apps.App, emails []string, policy Policy) ([]string, error) {
	// The common case first: every email has its public identity stored (a repeated email is
	// simply read twice). Anything else takes the general path.
	found, err := d.st.Publics(app.ID, emails)
	if err != nil {
		return nil, err
	}
	pubs := make([]string, len(emails))
	for i, p := range found {
		pub, state := policy.publicOf(p)
		if state != stored {
			pubs, _, err := d.publicIdentities(app, emails, found, policy, true)
			return pubs, err
		}
		pubs[i] = pub
	}
	return pubs, nil
}

// PublicIdentityNew is PublicIdentity for a caller that limits the records created (emails the
// directory had no record of), reading the email once. With mayCreate false, an email without
// a record gets ErrNoNewRecord and nothing is written (an existing record still gets the
// provisional identity it lacks). created reports whether this call created the email's record,
// as its write found it: a caller that counted a creation before the call gives it back when
// created is false (the email had a record, or another request created it first).
func (d *Directory) PublicIdentityNew(app apps.App, email string, policy Policy, mayCreate bool) (pub string, created bool, err error) {
	emails := []string{email}
	found, err := d.st.Publics(app.ID, emails)
	if err != nil {
		return "", false, err
	}
	if pub, state := policy.publicOf(found[0]); state == stored {
		return pub, false, nil
	}
	if !found[0].Found && !mayCreate {
		return "", false, ErrNoNewRecord
	}
	pubs, n, err := d.publicIdentities(app, emails, found, policy, mayCreate)
	if err != nil {
		return "", false, err
	}
	return pubs[0], n > 0, nil
}

// publicIdentities is PublicIdentities when some email has no stored public identity to answer
// with, given what was read for each email (found): the emails are resolved once each, the
// missing identities created in one write. It returns how many records that write created;
// with mayCreate false, an email whose record is gone by the write fails it with
// ErrNoNewRecord.
func (d *Directory) publicIdentities(app apps.App, emails []string, found []store.Public, policy Policy, mayCreate bool) ([]string, int, error) {
	index := make(map[string]int, len(emails)) // email -> position in unique
	unique := make([]string, 0, len(emails))
	uniqueFound := make([]store.Public, 0, len(emails))
	for k, e := range emails {
		if _, ok := index[e]; !ok {
			index[e] = len(unique)
			unique = append(unique, e)
			uniqueFound = append(uniqueFound, found[k])
		}
	}
	pubs := make([]string, len(unique))
	var missing, legacy []int // positions in unique
	for i, p := range uniqueFound {
		switch pub, state := policy.publicOf(p); state {
		case stored:
			pubs[i] = pub
		case notStored:
			legacy = append(legacy, i)
		default:
			missing = append(missing, i)
		}
	}
	if len(legacy) > 0 {
		if err := d.deriveAndCache(app, unique, legacy, pubs, policy); err != nil {
			return nil, 0, err
		}
	}
	created := 0
	if len(missing) > 0 {
		var err error
		if created, err = d.createProvisionals(app, unique, missing, pubs, policy, mayCreate); err != nil {
			return nil, 0, err
		}
	}
	out := make([]string, len(emails))
	for k, e := range emails {
		out[k] = pubs[index[e]]
	}
	return out, created, nil
}

// createProvisionals generates a provisional identity for each email of unique at the positions
// missing, stores them in one write transaction, fills pubs from what is stored, and returns how
// many records the write created (with mayCreate false, none: a record missing fails the write
// with ErrNoNewRecord).
func (d *Directory) createProvisionals(app apps.App, unique []string, missing []int, pubs []string, policy Policy, mayCreate bool) (int, error) {
	provs := make([]string, len(missing))
	provPubs := make([]string, len(missing))
	batch := make([]string, len(missing))
	for j, i := range missing {
		prov, pub, err := d.keys.Provisional(app.ID, identity.TargetEmail, unique[i])
		if err != nil {
			return 0, fmt.Errorf("directory: %w", err)
		}
		provs[j], provPubs[j], batch[j] = prov, pub, unique[i]
	}
	created := 0 // the write transaction may run twice (group commit): counted inside it, reset
	recs, err := d.st.UpdateRecords(app.ID, batch, func(j int, r *store.Record, exists bool) (bool, error) {
		if j == 0 {
			created = 0
		}
		if policy.usePermanent(r.PermanentIdentity != "", r.ProvisionalIdentity != "", r.Registered) || r.ProvisionalIdentity != "" {
			return false, nil // changed since the read: answer from the stored record
		}
		if !exists {
			if !mayCreate {
				return false, ErrNoNewRecord
			}
			created++
		}
		r.ProvisionalIdentity, r.PublicProvisional = provs[j], provPubs[j]
		return true, nil
	})
	if err != nil {
		return 0, err
	}
	for j, i := range missing {
		pub, err := policy.publicOfRecord(recs[j])
		if err != nil {
			return 0, err
		}
		pubs[i] = pub
	}
	return created, nil
}

// deriveAndCache answers the records at the positions legacy, which were stored without their
// public identities: it derives them from the private ones, then stores them in one write
// transaction so that the next read finds them.
func (d *Directory) deriveAndCache(app apps.App, unique []string, legacy []int, pubs []string, policy Policy) error {
	derived := map[string]string{} // private identity -> its public identity
	batch := make([]string, len(legacy))
	for j, i := range legacy {
		r, err := d.st.Record(app.ID, unique[i])
		if err != nil {
			return err
		}
		for _, private := range []string{r.PermanentIdentity, r.ProvisionalIdentity} {
			if private != "" {
				pub, err := identity.PublicIdentity(private)
				if err != nil {
					return fmt.Errorf("directory: public identity: %w", err)
				}
				derived[private] = pub
			}
		}
		r.PublicPermanent, r.PublicProvisional = derived[r.PermanentIdentity], derived[r.ProvisionalIdentity]
		if pubs[i], err = policy.publicOfRecord(r); err != nil {
			return err
		}
		batch[j] = unique[i]
	}
	_, err := d.st.UpdateRecords(app.ID, batch, func(_ int, r *store.Record, _ bool) (bool, error) {
		write := false
		if pub, ok := derived[r.PermanentIdentity]; ok && r.PublicPermanent == "" {
			r.PublicPermanent, write = pub, true
		}
		if pub, ok := derived[r.ProvisionalIdentity]; ok && r.PublicProvisional == "" {
			r.PublicProvisional, write = pub, true
		}
		return write, nil
	})
	return err
}

// publicState says whether a record has the public identity a policy answers with.
type publicState int

const (
	none      publicState = iota // no identity to answer with: a provisional one must be created
	stored                       // stored beside the private identity
	notStored                    // the identity exists but was stored without its public identity
)

// publicOf is the public identity p answers with for a record, and whether it is stored.
func (p Policy) publicOf(r store.Public) (string, publicState) {
	var pub string
	switch {
	case p.usePermanent(r.HasPermanent, r.HasProvisional, r.Registered):
		pub = r.PublicPermanent
	case r.HasProvisional:
		pub = r.PublicProvisional
	default:
		return "", none
	}
	if pub == "" {
		return "", notStored
	}
	return pub, stored
}

// publicOfRecord is the public identity p answers with for a full record that has one.
func (p Policy) publicOfRecord(r store.Record) (string, error) {
	pub, state := p.publicOf(r.Public())
	switch state {
	case stored:
		return pub, nil
	case notStored: // stored before public identities were kept, read through a write
		private := r.ProvisionalIdentity
		if p.usePermanent(r.PermanentIdentity != "", r.ProvisionalIdentity != "", r.Registered) {
			private = r.PermanentIdentity
		}
		pub, err := identity.PublicIdentity(private)
		if err != nil {
			return "", fmt.Errorf("directory: public identity: %w", err)
		}
		return pub, nil
	}
	return "", errors.New("directory: the stored record has no identity to share")
}
