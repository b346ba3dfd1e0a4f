package store

import (
	"sync"
)

// DefaultRecordCacheBytes bounds the record cache when Options.RecordCacheBytes is zero.
const DefaultRecordCacheBytes = 32 << 20

// recordCache keeps, per (app, email), what reads of identity records answer: the public part
// (Publics) and the private part (PrivateRecord), each filled by the read that unsealed it or by
// the write that stored it. A known email is then answered from memory, without a read
// transaction or an unsealing.
//
// What it holds: public identities, which are not secret, and the private identities of records
// read or written since the store opened. Records stay sealed at rest (in the file and its
// backups); this is process memory, as when a request handles the identity, bounded by maxBytes
// (Options.RecordCacheBytes, DefaultRecordCacheBytes by default; entries counted with their key
// and a fixed overhead). Past the bound, random entries are evicted. It never leaves the
// process: nothing here is logged or written.
//
// Consistency: every entry carries the version of the state it holds, (txid, seq): the bbolt
// transaction that state was read in or written by, and for a write its order inside that
// transaction. Writes update the cache after their commit, and only forward:
//   - a write (UpdateRecord, UpdateRecords) replaces the entry of each record it stored with the
//     stored record, unless the entry is newer; a write whose transaction is older than the last
//     write seen only drops its entries;
//   - DeleteApp drops every entry of the app;
//   - a read fills an entry only when no write committed after its transaction has been seen
//     (txid >= lastWrite), so a read that raced a write never puts back the state the write
//     replaced.
//
// A write therefore shows in every read that starts after it returned; a read concurrent with a
// write sees the state before or after it, as without the cache.
type recordCache struct {
	mu        sync.RWMutex
	apps      map[string]map[string]*cacheEntry // app ID -> email -> entry
	bytes     int                               // the sum of the entries' sizes
	maxBytes  int
	lastWrite uint64 // highest transaction ID of a record write or app deletion applied
}

// cacheVersion orders the states of one record: the transaction, then the write's order inside
// it (readSeq for a read, which sees the whole transaction).
type cacheVersion struct {
	txid uint64
	seq  uint64
}

const readSeq = ^uint64(0)

func (v cacheVersion) less(o cacheVersion) bool {
	return v.txid < o.txid || v.txid == o.txid && v.seq < o.seq
}

type cacheEntry struct {
	v cacheVersion
	// pub is the Public of the record, when hasPub.
	pub    Public
	hasPub bool
	// priv is the record without its public identities (PrivateRecord's answer, AppID and Email
	// left out), when hasPriv.
	priv    Record
	hasPriv bool
	size    int
}

// entryOverhead approximates an entry's memory beyond its strings (map slot, struct, headers).
const entryOverhead = 256

func (e *cacheEntry) measure(appID, email string) {
	e.size = entryOverhead + len(appID) + len(email) + len(e.pub.PublicPermanent) + len(e.pub.PublicProvisional) +
		len(e.priv.UserID) + len(e.priv.PermanentIdentity) + len(e.priv.ProvisionalIdentity)
}

func newRecordCache(maxBytes int) *recordCache {
	if maxBytes == 0 {
		maxBytes = DefaultRecordCacheBytes
	}
	return &recordCache{apps: map[string]map[string]*cacheEntry{}, maxBytes: maxBytes}
}

// off reports a cache switched off (Options.RecordCacheBytes < 0) or closed; c.mu must be held.
func (c *recordCache) off() bool { return c.maxBytes < 0 }

// close empties the cache and switches it off: a closed store answers nothing from memory.
func (c *recordCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.apps, c.bytes, c.maxBytes = map[string]map[string]*cacheEntry{}, 0, -1
}

// publics sets out[i] to the cached Public of each email of one app and returns the positions
// of the emails not cached, under one lock.
func (c *recordCache) publics(appID []byte, emails []string, out []Public) (missing []int) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	m := c.apps[string(appID)]
	for i, email := range emails {
		if e := m[email]; e != nil && e.hasPub {
			out[i] = e.pub
		} else {
			missing = append(missing, i)
		}
	}
	return missing
}

// private returns the cached private part of the record of (appID, email).
func (c *recordCache) private(appID []byte, email string) (Record, bool) {
	c.mu.RLock()
	e := c.apps[string(appID)][email]
	var r Record
	ok := e != nil && e.hasPriv
	if ok {
		r = e.priv
	}
	c.mu.RUnlock()
	return r, ok
}

// fillPublics stores pubs[i], read in transaction txid, for each position i of read whose
// record was found.
func (c *recordCache) fillPublics(txid uint64, appID []byte, emails []string, read []int, pubs []Public) {
	v := cacheVersion{txid, readSeq}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off() || txid < c.lastWrite {
		return
	}
	for _, i := range read {
		p := pubs[i]
		if !p.Found {
			continue
		}
		c.put(appID, emails[i], v, func(e *cacheEntry) { e.pub, e.hasPub = p, true })
	}
}

// fillPrivate stores a PrivateRecord read in transaction txid.
func (c *recordCache) fillPrivate(txid uint64, appID []byte, email string, r Record) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off() || txid < c.lastWrite {
		return
	}
	c.put(appID, email, cacheVersion{txid, readSeq}, func(e *cacheEntry) { e.priv, e.hasPriv = privatePart(r), true })
}

// written applies records stored by a write in transaction txid, r[i] stored with sequence
// seq[i] (0: not in the file, as a record fn declined to create, whose entry is dropped).
func (c *recordCache) written(txid uint64, recs []Record, seqs []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off() {
		return
	}
	if txid < c.lastWrite {
		for _, r := range recs {
			c.drop(string(r.AppID), r.Email)
		}
		return
	}
	c.lastWrite = txid
	for i, r := range recs {
		if seqs[i] == 0 {
			c.drop(string(r.AppID), r.Email)
			continue
		}
		c.put(r.AppID, r.Email, cacheVersion{txid, seqs[i]}, func(e *cacheEntry) {
			e.pub, e.hasPub = r.Public(), true
			e.priv, e.hasPriv = privatePart(r), true
		})
	}
}

// forget drops the entries of the emails of a write that failed, or may have.
func (c *recordCache) forget(appID []byte, emails ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, email := range emails {
		c.drop(string(appID), email)
	}
}

// dropApp drops every entry of an app, deleted in transaction txid.
func (c *recordCache) dropApp(txid uint64, appID []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.off() {
		return
	}
	c.lastWrite = max(c.lastWrite, txid)
	for _, e := range c.apps[string(appID)] {
		c.bytes -= e.size
	}
	delete(c.apps, string(appID))
}

// put sets the entry of (appID, email) to version v with set applied: merged into an entry of
// the same version, replacing an older one, never an entry newer than v. c.mu must be held.
func (c *recordCache) put(appID []byte, email string, v cacheVersion, set func(*cacheEntry)) {
	m := c.apps[string(appID)]
	if m == nil {
		m = map[string]*cacheEntry{}
		c.apps[string(appID)] = m
	}
	e := m[email]
	switch {
	case e == nil:
		e = &cacheEntry{v: v}
		m[email] = e
	case v.less(e.v):
		return
	default:
		c.bytes -= e.size
		if e.v != v { // an older state: replaced in place, not merged
			*e = cacheEntry{v: v}
		}
	}
	set(e)
	e.measure(string(appID), email)
	c.bytes += e.size
	for c.bytes > c.maxBytes && c.evict(string(appID), email) {
	}
}

// evict drops a random entry other than (keepApp, keepEmail) (map order is random); false when
// there is none.
func (c *recordCache) evict(keepApp, keepEmail string) bool {
	for app, m := range c.apps {
		for email := range m {
			if app != keepApp || email != keepEmail {
				c.drop(app, email)
				return true
			}
		}
	}
	return false
}

func (c *recordCache) drop(appID, email string) {
	m := c.apps[appID]
	if e := m[email]; e != nil {
		c.bytes -= e.size
		delete(m, email)
		if len(m) == 0 {
			delete(c.apps, appID)
		}
	}
}

func privatePart(r Record) Record {
	return Record{
		UserID: r.UserID, PermanentIdentity: r.PermanentIdentity, ProvisionalIdentity: r.ProvisionalIdentity,
		Registered: r.Registered, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
	}
}

// cachedPrivate is a cached private part as PrivateRecord answers it.
func cachedPrivate(appID []byte, email string, p Record) Record {
	p.AppID, p.Email = append([]byte(nil), appID...), email
	return p
}
