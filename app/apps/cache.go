package apps

import (
	"sync"
)

// appCache holds stored apps by ID. A generation counter, bumped by every drop, keeps a read
// that raced with a change from caching the value it read before the change.
type appCache struct {
	off  bool // Options.NoCache: nothing is kept
	mu   sync.RWMutex
	gen  uint64
	apps map[string]App
}

func (c *appCache) get(id []byte) (App, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	a, ok := c.apps[string(id)]
	return a, ok
}

// generation is taken before reading the store; put caches only if no drop happened since.
func (c *appCache) generation() uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen
}

func (c *appCache) put(gen uint64, a App) {
	if c.off { // set once, before any use: read without the lock
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.apps == nil {
		c.apps = map[string]App{}
	}
	c.apps[string(a.ID)] = a
}

// drop forgets an app after it changed or was deleted.
func (c *appCache) drop(id []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.apps, string(id))
}
