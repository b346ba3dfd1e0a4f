package exitdb

import (
	"container/list"
	"sync"

	"github.com/idvault/idvault/exit/encryption"
)

// keyCache is a bounded LRU of resolved keys by 16-byte ID. Only keys are
// cached: a key found stays valid, while a key not found may become
// reachable when any instance imports an identity.
type keyCache struct {
	mu    sync.Mutex
	size  int
	order *list.List // front = most recently used
	items map[encryption.SimpleID]*list.Element
}

type cacheEntry struct {
	id  encryption.SimpleID
	key []byte
}

func newKeyCache(size int) *keyCache {
	return &keyCache{size: size, order: list.New(), items: make(map[encryption.SimpleID]*list.Element)}
}

func (c *keyCache) get(id encryption.SimpleID) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[id]
	if !ok {
		return nil, false
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).key, true
}

func (c *keyCache) put(id encryption.SimpleID, key []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.items[id]; ok {
		c.order.MoveToFront(e)
		return
	}
	c.items[id] = c.order.PushFront(&cacheEntry{id: id, key: key})
	for c.order.Len() > c.size {
		last := c.order.Back()
		c.order.Remove(last)
		delete(c.items, last.Value.(*cacheEntry).id)
	}
}
