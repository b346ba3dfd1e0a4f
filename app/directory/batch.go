package directory

import (
	"errors"
	"fmt"

	"idvault/app/apps"
	"idvault/app/identity"
	"idvault/store"
)

// PublicIdentities returns the public identity of each email under policy, in the order given.
// emails must be normalised; a repeated email is resolved once and answered at each of its
// positions with the same identity.
//
// The provisional identities that are missing are generated first, outside any transaction,
// then stored in one write transaction (one commit for the whole list, instead of one per new
// email: a list of 100 new emails costs one fsync, not 100). As in PublicIdentity, a record that
// changed meanwhile is answered from what is stored, so concurrent requests agree.
func (d *Directory) PublicIdentities(app apps.App, emails []string, policy Policy) ([]string, error) {
	index := make(map[string]int, len(emails)) // email -> position in unique
	var unique []string
	for _, e := range emails {
		if _, ok := index[e]; !ok {
			index[e] = len(unique)
			unique = append(unique, e)
		}
	}
	pubs := make([]string, len(unique))
	var missing []int // positions in unique that need a provisional identity
	for i, e := range unique {
		r, err := d.st.Record(app.ID, e)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if err == nil {
			if pub, ok, err := policy.publicOf(r); err != nil {
				return nil, err
			} else if ok {
				pubs[i] = pub
				continue
			}
		}
		missing = append(missing, i)
	}
	if len(missing) > 0 {
		provs := make([]string, len(missing))
		batch := make([]string, len(missing))
		for j, i := range missing {
			prov, err := identity.CreateProvisional(app.ID, identity.TargetEmail, unique[i])
			if err != nil {
				return nil, fmt.Errorf("directory: create provisional identity: %w", err)
			}
			provs[j], batch[j] = prov, unique[i]
		}
		recs, err := d.st.UpdateRecords(app.ID, batch, func(j int, r *store.Record, _ bool) (bool, error) {
			if policy.usePermanent(*r) || r.ProvisionalIdentity != "" {
				return false, nil // changed since the read: answer from the stored record
			}
			r.ProvisionalIdentity = provs[j]
			return true, nil
		})
		if err != nil {
			return nil, err
		}
		for j, i := range missing {
			pub, _, err := policy.publicOf(recs[j])
			if err != nil {
				return nil, err
			}
			pubs[i] = pub
		}
	}
	out := make([]string, len(emails))
	for k, e := range emails {
		out[k] = pubs[index[e]]
	}
	return out, nil
}

// publicOf is the public identity r answers with under p, and false when r has no identity to
// answer with yet (a provisional identity must be created).
func (p Policy) publicOf(r store.Record) (string, bool, error) {
	var private string
	switch {
	case p.usePermanent(r):
		private = r.PermanentIdentity
	case r.ProvisionalIdentity != "":
		private = r.ProvisionalIdentity
	default:
		return "", false, nil
	}
	pub, err := identity.PublicIdentity(private)
	if err != nil {
		return "", false, fmt.Errorf("directory: public identity: %w", err)
	}
	return pub, true, nil
}
