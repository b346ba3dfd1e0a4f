package store

import (
	"sync"
	"sync/atomic"
)

// deletedApps remembers the IDs of the apps DeleteApp removed since the store opened, so that a
// write for one of them is refused (ErrAppDeleted) instead of recreating records, codes or
// counters under the deleted app's prefix: a request that found its app before the deletion
// may still be writing after it. Writes cannot instead require the app in the apps bucket,
// because apps declared in the config file are not stored there.
//
// An ID enters the set inside DeleteApp's transaction, while it holds bbolt's single writer
// lock, so every write transaction that follows the deletion sees it; it leaves when CreateApp
// stores an app with that ID again. The set only grows with deletions (32 bytes of key each)
// and is not kept across restarts: once the server restarts no request of a deleted app can be
// in flight, and lookups of the deleted ID fail before any write.
type deletedApps struct {
	n   atomic.Int64 // len(ids): writes skip the lock while no app was deleted
	mu  sync.Mutex
	ids map[string]struct{}
}

func (d *deletedApps) add(id []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.ids == nil {
		d.ids = map[string]struct{}{}
	}
	d.ids[string(id)] = struct{}{}
	d.n.Store(int64(len(d.ids)))
}

func (d *deletedApps) remove(id []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.ids, string(id))
	d.n.Store(int64(len(d.ids)))
}

// check returns a clean ErrAppDeleted (nothing written) when the app was deleted. Write
// functions call it first, inside their transaction.
func (d *deletedApps) check(id []byte) error {
	if d.n.Load() == 0 {
		return nil
	}
	d.mu.Lock()
	_, gone := d.ids[string(id)]
	d.mu.Unlock()
	if gone {
		return clean(ErrAppDeleted)
	}
	return nil
}
