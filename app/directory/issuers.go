package directory

import (
	"sync"

	"github.com/idvault/idvault/app/apps"
	"github.com/idvault/idvault/app/identity"
)

// issuers caches one identity.Issuer per app, so that the app's secret is checked (its public
// key derived from its seed) once rather than at every new permanent identity. An entry is
// used only while the app's ID and secret are those it was made from (compared in constant
// time), so a changed secret is checked again and replaces it.
type issuers struct {
	mu sync.RWMutex
	m  map[string]*identity.Issuer
	// dropped is told of every Issuer the cache lets go (the key pool wipes what it made
	// ahead of time with it).
	dropped func(*identity.Issuer)
	// forgotten are the IDs of apps deleted since the start: a request that found its app
	// before the deletion gets an Issuer that is dropped at once (never cached, nothing made
	// ahead of time with it). 32 bytes per deleted app, until a restart.
	forgotten map[string]bool
}

// maxIssuers bounds the cache: past it, the cache starts over (apps are few; this only keeps a
// server that saw a great many apps from holding all their secrets).
const maxIssuers = 1024

// forget removes the Issuer of appID (its app was deleted) and returns it, or nil; the ID is
// never cached again.
func (c *issuers) forget(appID []byte) *identity.Issuer {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.forgotten == nil {
		c.forgotten = map[string]bool{}
	}
	c.forgotten[string(appID)] = true
	is := c.m[string(appID)]
	delete(c.m, string(appID))
	return is
}

func (c *issuers) get(app apps.App) (*identity.Issuer, error) {
	c.mu.RLock()
	is := c.m[string(app.ID)]
	c.mu.RUnlock()
	if is != nil && is.Matches(app.ID, app.Secret) {
		return is, nil
	}
	is, err := identity.NewIssuer(app.ID, app.Secret)
	if err != nil {
		return nil, err
	}
	var gone []*identity.Issuer
	c.mu.Lock()
	if c.forgotten[string(app.ID)] {
		c.mu.Unlock()
		if c.dropped != nil {
			c.dropped(is)
		}
		return is, nil
	}
	if c.m == nil || len(c.m) >= maxIssuers {
		for _, old := range c.m {
			gone = append(gone, old)
		}
		c.m = map[string]*identity.Issuer{}
	}
	if old := c.m[string(app.ID)]; old != nil {
		gone = append(gone, old)
	}
	c.m[string(app.ID)] = is
	c.mu.Unlock()
	if c.dropped != nil {
		for _, old := range gone {
			c.dropped(old)
		}
	}
	return is, nil
}
