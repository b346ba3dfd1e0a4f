// Package exitfake is an in-memory exitserver.DB for tests: users with published keys, an
// import that accepts only known identities, and a switch that makes the database unavailable.
// It stands in for exit/exitdb where a real PostgreSQL is not the point of the test.
package exitfake

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	idhash "github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/encryption"
	"github.com/idvault/idvault/exit/exitdb"
)

// DB is the fake. The zero value is not usable: call New.
type DB struct {
	mu       sync.Mutex
	appID    []byte
	users    map[string][]byte // identity -> user ID
	imported map[string]bool
	keys     map[encryption.SimpleID]published
	down     bool
	// Lookups counts FindKey calls (tests of caching in front of the DB).
	Lookups int
}

type published struct {
	key   []byte
	owner string // identity that unlocks it
}

// New returns an empty fake database.
func New() *DB {
	appID := make([]byte, 32)
	_, _ = rand.Read(appID)
	return &DB{appID: appID, users: map[string][]byte{}, imported: map[string]bool{}, keys: map[encryption.SimpleID]published{}}
}

// AddUser makes a user and returns its (fake) private identity and user ID.
func (d *DB) AddUser() (identity string, userID []byte) {
	userID = make([]byte, 32)
	_, _ = rand.Read(userID)
	identity = "fake-identity-" + hex.EncodeToString(userID)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.users[identity] = userID
	return identity, userID
}

// AddImportedUser makes a user, as AddUser, already imported (as Import leaves it), and
// returns its identity: a user whose keys the server finds.
func (d *DB) AddImportedUser() string {
	identity, _ := d.AddUser()
	d.mu.Lock()
	defer d.mu.Unlock()
	d.imported[identity] = true
	return identity
}

// AddNamedUser makes a user whose user ID is the hash of name under the fake's app ID, as
// Tanker hashes the user IDs an app gives createIdentity, and returns its (fake) identity.
func (d *DB) AddNamedUser(name string) (identity string, userID []byte) {
	userID = idhash.HashUserID(d.appID, name)
	identity = "fake-identity-" + hex.EncodeToString(userID)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.users[identity] = userID
	return identity, userID
}

// Encrypt encrypts clear in format v for the user of identity (its creator) and publishes the
// key: under the resource ID for formats 2 to 8, under the session ID for 9 to 11.
func (d *DB) Encrypt(identity string, v encryption.Version, clear []byte, opts encryption.EncryptOptions) ([]byte, error) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	out, rid, err := encryption.Encrypt(v, key, clear, opts)
	if err != nil {
		return nil, err
	}
	d.Publish(identity, rid.ID, key)
	return out, nil
}

// Publish records key under id, unlocked by identity.
func (d *DB) Publish(identity string, id encryption.SimpleID, key []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.keys[id] = published{key: key, owner: identity}
}

// SetDown makes every call fail with exitdb.ErrUnavailable (true) or work again (false).
func (d *DB) SetDown(down bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.down = down
}

// IsImported reports whether identity was imported.
func (d *DB) IsImported(identity string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.imported[identity]
}

// Ping implements exitserver.DB.
func (d *DB) Ping(context.Context) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return fmt.Errorf("ping: %w", exitdb.ErrUnavailable)
	}
	return nil
}

// Import implements exitserver.DB: every identity must be one of AddUser's.
func (d *DB) Import(_ context.Context, identities []string) (exitdb.ImportResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return exitdb.ImportResult{}, fmt.Errorf("import: %w", exitdb.ErrUnavailable)
	}
	var bad []exitdb.EntryError
	for i, id := range identities {
		if _, ok := d.users[id]; !ok {
			bad = append(bad, exitdb.EntryError{Index: i, Reason: "user not in the dump"})
		}
	}
	if bad != nil {
		return exitdb.ImportResult{}, &exitdb.ImportError{Entries: bad}
	}
	var res exitdb.ImportResult
	for _, id := range identities {
		if d.imported[id] {
			res.AlreadyImported++
			continue
		}
		d.imported[id] = true
		res.Imported++
	}
	return res, nil
}

// KeyFinder implements exitserver.DB.
func (d *DB) KeyFinder(ctx context.Context) encryption.KeyFinder {
	return encryption.KeyFinderFunc(func(id encryption.SimpleID) ([]byte, error) {
		if err := ctx.Err(); err != nil { // as a database call would
			return nil, fmt.Errorf("find key: %w", err)
		}
		d.mu.Lock()
		defer d.mu.Unlock()
		d.Lookups++
		if d.down {
			return nil, fmt.Errorf("find key: %w", exitdb.ErrUnavailable)
		}
		p, ok := d.keys[id]
		switch {
		case !ok:
			return nil, encryption.ErrKeyNotFound
		case !d.imported[p.owner]:
			return nil, &exitdb.KeyNotFoundError{ID: id, CreatorUserID: d.users[p.owner], Publishes: 1}
		}
		return p.key, nil
	})
}

// AppID implements exitserver.DB: a random app ID drawn by New.
func (d *DB) AppID() []byte { return bytes.Clone(d.appID) }

// AuditKeys implements exitserver.DB: a key is reachable when its owner was imported, and is
// otherwise held by its owner alone.
func (d *DB) AuditKeys(_ context.Context, ids []encryption.SimpleID) ([]exitdb.KeyAudit, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.down {
		return nil, fmt.Errorf("audit keys: %w", exitdb.ErrUnavailable)
	}
	out := make([]exitdb.KeyAudit, len(ids))
	for i, id := range ids {
		p, ok := d.keys[id]
		switch {
		case !ok:
		case d.imported[p.owner]:
			out[i].Reachable = true
		default:
			out[i].Holders = [][]byte{bytes.Clone(d.users[p.owner])}
		}
	}
	return out, nil
}
