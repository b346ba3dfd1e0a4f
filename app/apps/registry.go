// Package apps manages apps: those created at runtime (kept in the store) and those declared in
// the config file (read-only). It issues auth tokens and checks them in constant time.
package apps

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/idvault/idvault/app/appname"
	"github.com/idvault/idvault/app/config"
	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/store"
)

// Errors the HTTP layer maps.
var (
	ErrNotFound = errors.New("apps: app not found")
	ErrDeclared = errors.New("apps: app is declared in the config file and read-only")
	// ErrNameTaken: another app (stored or declared) has that name, case-insensitively.
	ErrNameTaken = errors.New("apps: an app with this name exists")
	// ErrName: the name breaks app/appname's rule (1 to 100 printable characters).
	ErrName = errors.New("apps: name " + appname.Rule)
)

// TokenBytes is the number of random bytes in an auth token (shown as URL-safe base64).
const TokenBytes = 32

// App is an app as handlers see it.
type App struct {
	store.App
	// Declared apps come from the config file and cannot be changed at runtime.
	Declared bool
}

// Store is what the registry needs from the store.
type Store interface {
	CreateApp(store.App) error
	App(id []byte) (store.App, error)
	Apps() ([]store.App, error)
	SetAppAuthTokenHash(id, hash []byte) (store.App, error)
	SetAppOptions(id []byte, opts store.AppOptions) (store.App, error)
	DeleteApp(id []byte) error
}

// Registry finds, creates and changes apps.
//
// Stored apps are cached after their first read (every identity request looks its app up, and
// reading one means a transaction, a decode and unsealing its secret). The registry is the only
// writer of apps while idvault runs (the data file is locked by the server), so it drops an app
// from the cache whenever it changes or deletes it.
type Registry struct {
	store    Store
	declared map[string]App
	cache    appCache
	// afterDelete are told the ID of every app Delete removed.
	afterDelete []func(id []byte)
}

// Options tune NewRegistryWith.
type Options struct {
	// NoCache reads a stored app from the store at every Get (BenchmarkDevices' no-app-cache
	// measures what the cache gives).
	NoCache bool
}

// NewRegistry builds the registry; declared apps are checked and take precedence over stored
// apps with the same ID.
func NewRegistry(s Store, declared []config.DeclaredApp) (*Registry, error) {
	return NewRegistryWith(s, declared, Options{})
}

// NewRegistryWith is NewRegistry with options.
func NewRegistryWith(s Store, declared []config.DeclaredApp, o Options) (*Registry, error) {
	r := &Registry{store: s, declared: map[string]App{}, cache: appCache{off: o.NoCache}}
	for i, d := range declared {
		a, err := fromDeclared(d)
		if err != nil {
			return nil, fmt.Errorf("apps[%d] (%s): %w", i, d.Name, err)
		}
		if _, dup := r.declared[string(a.ID)]; dup {
			return nil, fmt.Errorf("apps[%d] (%s): declared twice", i, d.Name)
		}
		r.declared[string(a.ID)] = a
	}
	return r, nil
}

func fromDeclared(d config.DeclaredApp) (App, error) {
	secret, err := base64.StdEncoding.DecodeString(strings.TrimSpace(d.Secret))
	if err != nil {
		return App{}, errors.New("secret is not base64")
	}
	id, err := identity.AppIDFromSecret(secret)
	if err != nil {
		return App{}, err
	}
	hash := sha256.Sum256([]byte(d.AuthToken))
	if d.AuthTokenSHA256 != "" {
		h, err := hex.DecodeString(d.AuthTokenSHA256)
		if err != nil || len(h) != sha256.Size {
			return App{}, errors.New("auth_token_sha256 is not 64 hex digits")
		}
		copy(hash[:], h)
	}
	return App{Declared: true, App: store.App{
		ID: id, Name: d.Name, Secret: secret, AuthTokenHash: hash[:], Test: d.Test,
		Options: store.AppOptions{LegacyErrors: d.LegacyErrors, RegisteredUsersOnly: d.RegisteredUsersOnly},
	}}, nil
}

// Get returns the app with that ID, or ErrNotFound.
func (r *Registry) Get(id []byte) (App, error) {
	if a, ok := r.declared[string(id)]; ok {
		return a, nil
	}
	if a, ok := r.cache.get(id); ok {
		return a, nil
	}
	gen := r.cache.generation()
	a, err := r.store.App(id)
	if errors.Is(err, store.ErrNotFound) {
		return App{}, ErrNotFound
	}
	if err != nil {
		return App{}, err
	}
	r.cache.put(gen, App{App: a})
	return App{App: a}, nil
}

// List returns every app, declared and stored, ordered by name then ID.
func (r *Registry) List() ([]App, error) {
	stored, err := r.store.Apps()
	if err != nil {
		return nil, err
	}
	out := make([]App, 0, len(stored)+len(r.declared))
	for _, a := range r.declared {
		out = append(out, a)
	}
	for _, a := range stored {
		if _, shadowed := r.declared[string(a.ID)]; !shadowed {
			out = append(out, App{App: a})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Name != out[j].Name {
			return out[i].Name < out[j].Name
		}
		return string(out[i].ID) < string(out[j].ID)
	})
	return out, nil
}

// Created is a new app with the values shown only once: its secret and its auth token.
type Created struct {
	App       App
	AuthToken string
}

// Create makes a new app with a fresh app secret and auth token.
func (r *Registry) Create(name string, test bool, opts store.AppOptions) (Created, error) {
	name = strings.TrimSpace(name)
	if !appname.Valid(name) {
		return Created{}, ErrName
	}
	for _, d := range r.declared {
		if strings.EqualFold(d.Name, name) {
			return Created{}, ErrNameTaken
		}
	}
	id, secret, err := identity.GenerateApp(rand.Reader)
	if err != nil {
		return Created{}, fmt.Errorf("apps: create: %w", err)
	}
	token, hash, err := newToken()
	if err != nil {
		return Created{}, err
	}
	a := store.App{ID: id, Name: name, Secret: secret, AuthTokenHash: hash, Test: test, Options: opts}
	if err := r.store.CreateApp(a); errors.Is(err, store.ErrNameTaken) {
		return Created{}, ErrNameTaken
	} else if err != nil {
		return Created{}, fmt.Errorf("apps: create: %w", err)
	}
	stored, err := r.store.App(id)
	if err != nil {
		return Created{}, fmt.Errorf("apps: create: %w", err)
	}
	return Created{App: App{App: stored}, AuthToken: token}, nil
}

// RotateToken replaces an app's auth token and returns the new one (shown once).
func (r *Registry) RotateToken(id []byte) (string, error) {
	if _, ok := r.declared[string(id)]; ok {
		return "", ErrDeclared
	}
	token, hash, err := newToken()
	if err != nil {
		return "", err
	}
	_, err = r.store.SetAppAuthTokenHash(id, hash)
	r.cache.drop(id)
	if errors.Is(err, store.ErrNotFound) {
		return "", ErrNotFound
	} else if err != nil {
		return "", err
	}
	return token, nil
}

// SetOptions replaces an app's options and returns the changed app. Like RotateToken and
// Delete it changes a stored app, so the cache of apps forgets id here too.
func (r *Registry) SetOptions(id []byte, opts store.AppOptions) (App, error) {
	if _, ok := r.declared[string(id)]; ok {
		return App{}, ErrDeclared
	}
	a, err := r.store.SetAppOptions(id, opts)
	r.cache.drop(id)
	if errors.Is(err, store.ErrNotFound) {
		return App{}, ErrNotFound
	}
	if err != nil {
		return App{}, err
	}
	return App{App: a}, nil
}

// AfterDelete registers fn, called with an app's ID once Delete removed the app, so that what
// another component keeps of it goes too (the directory's identities made ahead of time with
// its secret: directory.Forget). Call it while wiring, before the registry is used.
func (r *Registry) AfterDelete(fn func(id []byte)) { r.afterDelete = append(r.afterDelete, fn) }

// Delete removes an app and all its records.
func (r *Registry) Delete(id []byte) error {
	if _, ok := r.declared[string(id)]; ok {
		return ErrDeclared
	}
	err := r.store.DeleteApp(id)
	r.cache.drop(id)
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	if err != nil {
		return err
	}
	for _, fn := range r.afterDelete {
		fn(id)
	}
	return nil
}

// CheckToken reports whether token is the app's auth token, comparing SHA-256 digests in
// constant time.
func CheckToken(a App, token string) bool {
	h := sha256.Sum256([]byte(token))
	return len(a.AuthTokenHash) == sha256.Size && subtle.ConstantTimeCompare(h[:], a.AuthTokenHash) == 1
}

func newToken() (token string, hash []byte, err error) {
	raw := make([]byte, TokenBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", nil, fmt.Errorf("apps: generate token: %w", err)
	}
	token = base64.RawURLEncoding.EncodeToString(raw)
	h := sha256.Sum256([]byte(token))
	return token, h[:], nil
}
