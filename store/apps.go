package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// App is an application as the store keeps it. Secret is the 64-byte Ed25519 app secret in
// clear; it is sealed on disk. AuthTokenHash is SHA-256 of the auth token: the token itself is
// never stored.
type App struct {
	ID            []byte
	Name          string
	Secret        []byte
	AuthTokenHash []byte
	Test          bool
	Options       AppOptions
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// AppOptions are per-app switches.
type AppOptions struct {
	// LegacyErrors: the verification send route answers with the flat pre-2021 error body.
	LegacyErrors bool `json:"legacy_errors,omitempty"`
	// RegisteredUsersOnly: verification mail only for addresses with a registered identity.
	RegisteredUsersOnly bool `json:"registered_users_only,omitempty"`
}

// appRecord is the on-disk form of App.
type appRecord struct {
	Name          string     `json:"name"`
	SealedSecret  []byte     `json:"sealed_secret"`
	AuthTokenHash []byte     `json:"auth_token_hash"`
	Test          bool       `json:"test"`
	Options       AppOptions `json:"options"`
	CreatedAt     time.Time  `json:"created_at"`
	UpdatedAt     time.Time  `json:"updated_at"`
}

// CreateApp stores a new app; ErrExists if the ID is taken, ErrNameTaken if another app has
// its name (case-insensitively: "Shop" and "shop" would be told apart by no one), checked in
// the same transaction as the write, so two concurrent creations cannot both pass.
func (s *Store) CreateApp(a App) error {
	now := s.now().UTC()
	a.CreatedAt, a.UpdatedAt = now, now
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketApps)
		if b.Get(a.ID) != nil {
			return ErrExists
		}
		var taken bool
		err := b.ForEach(func(_, v []byte) error {
			var r struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(v, &r); err != nil {
				return damaged(s.db.Path(), fmt.Errorf("decode app: %w", err))
			}
			taken = taken || strings.EqualFold(r.Name, a.Name)
			return nil
		})
		if err != nil {
			return err
		}
		if taken {
			return ErrNameTaken
		}
		return s.putApp(b, a)
	})
	if err == nil {
		s.deleted.remove(a.ID)
	}
	return err
}

func (s *Store) putApp(b *bolt.Bucket, a App) error {
	sealed, err := s.seal.seal(a.Secret, adFor(bucketApps, a.ID, "secret"))
	if err != nil {
		return err
	}
	v, err := json.Marshal(appRecord{
		Name: a.Name, SealedSecret: sealed, AuthTokenHash: a.AuthTokenHash, Test: a.Test,
		Options: a.Options, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt,
	})
	if err != nil {
		return fmt.Errorf("store: encode app: %w", err)
	}
	return b.Put(a.ID, v)
}

func (s *Store) decodeApp(id, v []byte) (App, error) {
	var r appRecord
	if err := json.Unmarshal(v, &r); err != nil {
		return App{}, damaged(s.db.Path(), fmt.Errorf("decode app: %w", err))
	}
	secret, err := s.seal.open(r.SealedSecret, adFor(bucketApps, id, "secret"))
	if err != nil {
		return App{}, fmt.Errorf("store: app secret: %w", err)
	}
	return App{
		ID: append([]byte(nil), id...), Name: r.Name, Secret: secret, AuthTokenHash: r.AuthTokenHash,
		Test: r.Test, Options: r.Options, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}, nil
}

// App returns the app with that ID, or ErrNotFound.
func (s *Store) App(id []byte) (App, error) {
	var a App
	err := s.view(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketApps).Get(id)
		if v == nil {
			return ErrNotFound
		}
		var err error
		a, err = s.decodeApp(id, v)
		return err
	})
	return a, err
}

// Apps lists every stored app, ordered by ID.
func (s *Store) Apps() ([]App, error) {
	var apps []App
	err := s.view(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketApps).ForEach(func(k, v []byte) error {
			a, err := s.decodeApp(k, v)
			if err != nil {
				return err
			}
			apps = append(apps, a)
			return nil
		})
	})
	return apps, err
}

// SetAppAuthTokenHash replaces an app's auth token hash; ErrNotFound if there is no such app.
func (s *Store) SetAppAuthTokenHash(id, hash []byte) (App, error) {
	return s.updateApp(id, func(a *App) { a.AuthTokenHash = hash })
}

// SetAppOptions replaces an app's options; ErrNotFound if there is no such app.
func (s *Store) SetAppOptions(id []byte, opts AppOptions) (App, error) {
	return s.updateApp(id, func(a *App) { a.Options = opts })
}

// updateApp reads an app, applies change, stamps UpdatedAt and stores it, in one transaction;
// ErrNotFound if there is no such app.
func (s *Store) updateApp(id []byte, change func(*App)) (App, error) {
	var a App
	err := s.update(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketApps)
		v := b.Get(id)
		if v == nil {
			return ErrNotFound
		}
		var err error
		if a, err = s.decodeApp(id, v); err != nil {
			return err
		}
		change(&a)
		a.UpdatedAt = s.now().UTC()
		return s.putApp(b, a)
	})
	return a, err
}

// DeleteApp removes an app and every identity record, code and counter kept for it. Writes for
// the app that come after it (from requests that found the app before) fail with ErrAppDeleted.
func (s *Store) DeleteApp(id []byte) error {
	var txid uint64
	err := s.update(func(tx *bolt.Tx) error {
		txid = uint64(tx.ID())
		b := tx.Bucket(bucketApps)
		if b.Get(id) == nil {
			return ErrNotFound
		}
		if err := b.Delete(id); err != nil {
			return err
		}
		for _, name := range [][]byte{bucketRecords, bucketCodes, bucketThrottle} {
			if err := deletePrefix(tx.Bucket(name), id); err != nil {
				return err
			}
		}
		// Under the writer lock: every write transaction after this one refuses the app.
		s.deleted.add(id)
		return nil
	})
	if err != nil {
		if !errors.Is(err, ErrNotFound) {
			s.deleted.remove(id) // the deletion did not commit
		}
		return err
	}
	s.cache.dropApp(txid, id)
	return nil
}

// deletePrefix removes every key of b that starts with prefix.
func deletePrefix(b *bolt.Bucket, prefix []byte) error {
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && hasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := c.Delete(); err != nil {
			return err
		}
	}
	return nil
}

func hasPrefix(k, prefix []byte) bool {
	return len(k) >= len(prefix) && string(k[:len(prefix)]) == string(prefix)
}
