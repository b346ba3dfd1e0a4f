// Package directory is the identity directory: one record per (app, email), shared by the fake
// authentication server and the reference identity server, so that one email gets one
// permanent identity from both.
//
// Keys are generated outside any store transaction; the transaction only decides whether the
// new identity is used. Of many concurrent requests for a new email, the first commit wins and
// every other request returns the winner's identity: exactly one identity per email.
//
// Invariants: a record holds at most one permanent and one provisional identity, neither is
// ever replaced or dropped; "registered" implies a permanent identity (Register refuses an email
// without one). PublicIdentities stores the provisional identities a list needs in one write
// transaction, so a list of new emails costs one commit.
package directory

import (
	"errors"
	"fmt"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/store"
)

// ErrUnknownUser: no record exists for that email.
var ErrUnknownUser = errors.New("directory: unknown user")

// ErrNoNewRecord: PublicIdentityNew was not allowed to create a record, and the email has none.
var ErrNoNewRecord = errors.New("directory: public identity: no new record allowed")

// Store is what the directory needs from the store.
type Store interface {
	Record(appID []byte, email string) (store.Record, error)
	PrivateRecord(appID []byte, email string) (store.Record, error)
	Publics(appID []byte, emails []string) ([]store.Public, error)
	UpdateRecord(appID []byte, email string, fn func(r *store.Record, exists bool) (bool, error)) (store.Record, error)
	UpdateRecords(appID []byte, emails []string, fn func(i int, r *store.Record, exists bool) (bool, error)) ([]store.Record, error)
}

// Directory creates and finds identity records.
type Directory struct {
	st      Store
	issuers issuers
	// keys holds keys (and whole permanent identities) made ahead of time for new identities,
	// off the request's path (see identity.KeyPool).
	keys *identity.KeyPool
}

// keyPoolSize is how many permanent identities per app and provisional key pairs the directory
// keeps ready: about three commits' worth of new identities under load. A ready permanent
// identity holds about 900 bytes (its 688-byte secret identity, its public identity and user
// ID), so the pool holds about 60 KB per app and about 250 KB at most (identity.KeyPool keeps
// four apps' worth in all, shared between the apps creating identities), key pairs included.
const keyPoolSize = 64

// Options configure NewWith.
type Options struct {
	// NoKeyPool makes every identity's keys on the request's path (no identity.KeyPool).
	NoKeyPool bool
	// NoKeyPoolYield runs the key pool's rounds back to back (identity.KeyPoolOptions.NoYield).
	NoKeyPoolYield bool
}

// New makes a directory over st with the default options. Close releases its key pool.
func New(st Store) *Directory { return NewWith(st, Options{}) }

// NewWith makes a directory over st. Close releases its key pool.
func NewWith(st Store, o Options) *Directory {
	var keys *identity.KeyPool // nil: no pool
	if !o.NoKeyPool {
		keys = identity.NewKeyPoolWith(keyPoolSize, identity.KeyPoolOptions{NoYield: o.NoKeyPoolYield})
	}
	return &Directory{st: st, keys: keys, issuers: issuers{dropped: keys.Drop}}
}

// Close stops making keys ahead of time and wipes those not used. The directory still works
// afterwards, making each identity's keys on the request's path.
func (d *Directory) Close() { d.keys.Close() }

// Forget drops what the directory keeps of a deleted app: its Issuer (with the app's secret)
// and the private identities its key pool made ahead of time with it, wiped. Wire it to
// apps.Registry.AfterDelete.
func (d *Directory) Forget(appID []byte) {
	if is := d.issuers.forget(appID); is != nil {
		d.keys.Drop(is)
	}
}

// KeyPoolStats returns the counters of the directory's key pool.
func (d *Directory) KeyPoolStats() identity.KeyPoolStats { return d.keys.Stats() }

// Lookup returns the record of email, or ErrUnknownUser. email must be normalised. Its public
// identities are not read (left ""): PublicIdentity answers those.
func (d *Directory) Lookup(app apps.App, email string) (store.Record, error) {
	r, err := d.st.PrivateRecord(app.ID, email)
	if errors.Is(err, store.ErrNotFound) {
		return store.Record{}, ErrUnknownUser
	}
	return r, err
}

// Permanent returns the record of email with its permanent identity, creating the identity
// (with a new random UUID as user ID, registered=false) when the email has none. The record's
// public identities may be left "" (an existing record is read without them).
func (d *Directory) Permanent(app apps.App, email string) (store.Record, error) {
	r, err := d.st.PrivateRecord(app.ID, email)
	if err == nil && r.PermanentIdentity != "" {
		return r, nil
	}
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return store.Record{}, err
	}
	is, err := d.issuers.get(app)
	if err != nil {
		return store.Record{}, fmt.Errorf("directory: create permanent identity: %w", err)
	}
	userID, perm, pub, err := d.keys.NewPermanent(is)
	if err != nil {
		return store.Record{}, fmt.Errorf("directory: %w", err)
	}
	return d.st.UpdateRecord(app.ID, email, func(r *store.Record, _ bool) (bool, error) {
		if r.PermanentIdentity != "" {
			return false, nil // another request created it first: use theirs
		}
		r.UserID, r.PermanentIdentity, r.PublicPermanent, r.Registered = userID, perm, pub, false
		return true, nil
	})
}

// Policy decides which public identity an email gets.
type Policy int

const (
	// FakeAuthPolicy: the permanent identity when the email has one and either has no
	// provisional identity or is registered; otherwise the provisional one (created if needed).
	FakeAuthPolicy Policy = iota
	// IdentityServerPolicy: the permanent identity once the email is registered; otherwise the
	// provisional one, created if needed beside (never instead of) a permanent identity.
	IdentityServerPolicy
)

func (p Policy) usePermanent(hasPermanent, hasProvisional, registered bool) bool {
	if !hasPermanent {
		return false
	}
	if p == FakeAuthPolicy {
		return !hasProvisional || registered
	}
	return registered
}

// PublicIdentity returns the public identity email should be shared with under policy,
// creating and storing a provisional identity (target email) when the email has none to use.
func (d *Directory) PublicIdentity(app apps.App, email string, policy Policy) (string, error) {
	pubs, err := d.PublicIdentities(app, []string{email}, policy)
	if err != nil {
		return "", err
	}
	return pubs[0], nil
}

// Register marks email as registered; ErrUnknownUser when it has no permanent identity.
//
// A record that holds only a provisional identity is not a user yet (no permanent identity was
// ever handed out, so nobody can have registered with it): it is ErrUnknownUser too, and its
// record is left unchanged. This keeps the invariant "registered implies a permanent identity",
// so a permanent identity created later always starts unregistered.
func (d *Directory) Register(app apps.App, email string) (store.Record, error) {
	r, err := d.st.UpdateRecord(app.ID, email, func(r *store.Record, exists bool) (bool, error) {
		if !exists || r.PermanentIdentity == "" {
			return false, ErrUnknownUser
		}
		if r.Registered {
			return false, nil
		}
		r.Registered = true
		return true, nil
	})
	return r, err
}
