package identity

import (
	"cmp"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/google/uuid"
)

// KeyPool holds a few identities' keys made ahead of time, so that a server creating identities
// takes their key generation off the request's path: they are made by one background goroutine
// while the cores would otherwise wait (a new identity spends most of its time waiting for its
// commit to reach the disk), and a creation takes them ready instead of making them.
//
// It keeps two kinds of material, bounded by the size given to NewKeyPool:
//   - whole permanent identities, per Issuer (per app): a permanent identity depends on nothing
//     a request brings (its user ID is a random UUID drawn with it), so its keys, its
//     delegation signature and both its documents are made ahead. At most permanentApps × size
//     are ready in all, shared between the Issuers that are asking (see below);
//   - key pairs for provisional identities, an Ed25519 pair and an X25519 pair each, whose
//     documents are written on the request's path (they hold the email); at most size.
//
// How the permanent identities are shared: an Issuer is asking while it was asked for one of
// the last permanentApps × size permanent identities the pool was asked for (served or not);
// the pool counts draws, not time, so an idle server keeps what it made. Each Issuer asking has
// an equal share of the total, at most size: permanentApps × size divided by how many are
// asking. The filler refills only the queues of Issuers asking, up to their share, and only
// into room: when the total is at its bound, it takes the room from the queue drawn from least
// recently among those of Issuers no longer asking, wiping the identity it removes. A queue of
// an Issuer still asking is never cut: if it holds more than its share (it had the room before
// more Issuers asked), it shrinks as it is drawn from, so no identity still wanted is made only
// to be wiped. Apps creating identities in turn therefore keep their queues, however many there
// are, as long as each share is at least one (up to 256 apps with the directory's size); a
// queue neither asked nor holding anything is forgotten.
//
// What it guarantees:
//   - everything comes from crypto/rand, as on the request's path, and is handed out at most
//     once: it leaves the pool when taken (a channel receive) and the pool keeps no reference
//     to it;
//   - nothing is made before it was first asked for (a server that never creates a provisional
//     identity makes no X25519 pair, an app's permanent identities are made only after its
//     first one);
//   - an empty pool never makes a creation wait: the creation makes its own keys, exactly as
//     without a pool;
//   - the filler makes one item of each kind at a time and yields between rounds
//     (runtime.Gosched, unless KeyPoolOptions.NoYield), so request goroutines waiting for a
//     core run between them; it makes nothing once the pool is full, and waits without
//     spinning until something is taken;
//   - Close stops the filler and wipes every private key and secret identity not handed out; so
//     do Drop (an Issuer no longer used) for its Issuer's queue, and the filler for an identity
//     it takes out of a queue to make room. A closed pool hands out nothing and every creation
//     makes its own keys.
//
// The zero KeyPool is not usable; a nil *KeyPool is, and makes everything on the caller's path.
type KeyPool struct {
	size int
	sig  chan *signatureKeys
	enc  chan *encryptionKeys
	want chan struct{} // something was taken or missed: the filler looks again

	// perm holds the queues of ready permanent identities by Issuer, guarded by permMu (the
	// filler changes what queues hold only with permMu held for writing). draws counts the
	// permanent identities asked for: the clock by which an Issuer is asking or not.
	permMu  sync.RWMutex
	perm    map[*Issuer]*permanentQueue
	permCap int
	draws   atomic.Int64

	// wantPairs is set by the first provisional identity asked for.
	wantPairs atomic.Bool
	started   atomic.Bool
	closed    atomic.Bool

	mu   sync.Mutex // orders the filler's start with Close
	stop chan struct{}
	done chan struct{}

	taken, missed atomic.Int64

	noYield bool // KeyPoolOptions.NoYield
}

type signatureKeys struct {
	pub  ed25519.PublicKey
	priv ed25519.PrivateKey
}

type encryptionKeys struct {
	pub, priv []byte
}

// permanentApps bounds the permanent identities ready in all, across apps: permanentApps ×
// the pool's size, the memory four apps' full queues take (about 900 bytes an identity).
const permanentApps = 4

// permanentQueue holds permanent identities made ahead of time by one Issuer.
type permanentQueue struct {
	is    *Issuer
	ready chan *readyPermanent
	// last is KeyPool.draws when the Issuer was last asked for an identity (stored with
	// KeyPool.permMu held, at least for reading).
	last    atomic.Int64
	evicted bool // guarded by KeyPool.permMu: no identity is queued any more
}

// readyPermanent is a whole permanent identity: a random user ID, its secret identity (kept as
// a buffer, wiped if never handed out) and its public identity.
type readyPermanent struct {
	userID string
	secret []byte
	public string
}

// KeyPoolOptions tune NewKeyPoolWith.
type KeyPoolOptions struct {
	// NoYield runs the filler's rounds back to back, without the runtime.Gosched between them
	// that lets request goroutines waiting for a core run first (BenchmarkDevices' no-pool-yield
	// measures what the yield gives).
	NoYield bool
}

// NewKeyPool returns a pool that keeps at most size provisional key pairs, and size permanent
// identities per Issuer with permanentApps × size in all. Its filler starts with the first
// creation; Close stops it.
func NewKeyPool(size int) *KeyPool { return NewKeyPoolWith(size, KeyPoolOptions{}) }

// NewKeyPoolWith is NewKeyPool with options.
func NewKeyPoolWith(size int, o KeyPoolOptions) *KeyPool {
	return &KeyPool{
		noYield: o.NoYield,
		size:    size,
		perm:    map[*Issuer]*permanentQueue{},
		permCap: permanentApps * size,
		sig:     make(chan *signatureKeys, size),
		enc:     make(chan *encryptionKeys, size),
		want:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
}

// KeyPoolStats are counters of a pool's use.
type KeyPoolStats struct {
	Taken  int64 // creations whose keys all came from the pool
	Missed int64 // creations that made keys on the caller's path (pool empty or closed)
	Ready  int   // items in the pool now: permanent identities and key pairs
}

// Stats returns the pool's counters.
func (p *KeyPool) Stats() KeyPoolStats {
	if p == nil {
		return KeyPoolStats{}
	}
	ready := len(p.sig) + len(p.enc)
	p.permMu.RLock()
	for _, q := range p.perm {
		ready += len(q.ready)
	}
	p.permMu.RUnlock()
	return KeyPoolStats{Taken: p.taken.Load(), Missed: p.missed.Load(), Ready: ready}
}

// Close stops the filler and wipes the private keys and secret identities not handed out. It is
// idempotent.
func (p *KeyPool) Close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed.Swap(true) {
		return
	}
	close(p.stop)
	if p.started.Load() {
		<-p.done
	}
	p.permMu.Lock()
	for _, q := range p.perm {
		q.evict()
	}
	clear(p.perm)
	p.permMu.Unlock()
	for {
		select {
		case k := <-p.sig:
			clear(k.priv)
		case k := <-p.enc:
			clear(k.priv)
		default:
			return
		}
	}
}

// provisionalKeys hands out a ready Ed25519 pair and X25519 pair (made as
// newEncryptionKeyPairFast makes it), making on the caller's path any the pool has not.
func (p *KeyPool) provisionalKeys() (sig *signatureKeys, enc *encryptionKeys, err error) {
	if p != nil {
		if !p.closed.Load() {
			p.wantPairs.Store(true)
			select {
			case sig = <-p.sig:
			default:
			}
			select {
			case enc = <-p.enc:
			default:
			}
			p.kick()
		}
		if sig != nil && enc != nil {
			p.taken.Add(1)
		} else {
			p.missed.Add(1)
		}
	}
	if sig == nil {
		if sig, err = newSignatureKeys(); err != nil {
			if enc != nil {
				clear(enc.priv)
			}
			return nil, nil, fmt.Errorf("signature key: %w", err)
		}
	}
	if enc == nil {
		if enc, err = newEncryptionKeys(); err != nil {
			clear(sig.priv)
			return nil, nil, fmt.Errorf("encryption key: %w", err)
		}
	}
	return sig, enc, nil
}

func newSignatureKeys() (*signatureKeys, error) {
	pub, priv, err := newSignatureKeyPair(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &signatureKeys{pub: pub, priv: priv}, nil
}

func newEncryptionKeys() (*encryptionKeys, error) {
	pub, priv, err := newEncryptionKeyPairFast()
	if err != nil {
		return nil, err
	}
	return &encryptionKeys{pub: pub, priv: priv}, nil
}

// kick starts the filler on first use and tells it to look at the pool again.
func (p *KeyPool) kick() {
	if !p.started.Load() {
		p.mu.Lock()
		if !p.started.Load() && !p.closed.Load() {
			p.started.Store(true)
			go p.fill()
		}
		p.mu.Unlock()
	}
	select {
	case p.want <- struct{}{}:
	default:
	}
}

// fill makes keys until the pool is full, one item of each kind per round, then waits for
// something to be taken. Only fill sends to p.sig and p.enc, so a send after seeing room never
// blocks.
func (p *KeyPool) fill() {
	defer close(p.done)
	for {
		select {
		case <-p.stop:
			return
		case <-p.want:
		}
		for p.fillRound() {
			select {
			case <-p.stop:
				return
			default:
			}
			if !p.noYield {
				runtime.Gosched() // let request goroutines waiting for a core run between rounds
			}
		}
	}
}

// fillRound makes one item of each kind the pool lacks (a permanent identity for each Issuer
// below its share) and reports whether it made any. If crypto/rand fails, it stops: creations
// make their own keys and see the error.
func (p *KeyPool) fillRound() (made bool) {
	if p.wantPairs.Load() && len(p.sig) < cap(p.sig) {
		k, err := newSignatureKeys()
		if err != nil {
			return false
		}
		p.sig <- k
		made = true
	}
	if p.wantPairs.Load() && len(p.enc) < cap(p.enc) {
		k, err := newEncryptionKeys()
		if err != nil {
			return false
		}
		p.enc <- k
		made = true
	}
	for _, q := range p.permanentWanted() {
		r, err := makePermanent(q.is)
		if err != nil {
			return false
		}
		p.queuePermanent(q, r)
		made = true
	}
	return made
}

// NewPermanent returns a new permanent identity made by is: its user ID (a random UUID, version
// 4), its b64 secret identity and its public identity, as is.CreatePermanent makes them for
// that user ID. A permanent identity depends on nothing the request brings (the user ID is
// drawn here), so the pool keeps whole identities ready for the Issuers asking for them; when
// none is ready, it is made on the caller's path.
func (p *KeyPool) NewPermanent(is *Issuer) (userID, secret, public string, err error) {
	if p != nil {
		if !p.closed.Load() {
			q := p.queueOf(is)
			select {
			case r := <-q.ready:
				p.taken.Add(1)
				p.kick()
				return r.userID, unsafe.String(unsafe.SliceData(r.secret), len(r.secret)), r.public, nil
			default:
				p.kick()
			}
		}
		p.missed.Add(1)
	}
	r, err := makePermanent(is)
	if err != nil {
		return "", "", "", err
	}
	return r.userID, unsafe.String(unsafe.SliceData(r.secret), len(r.secret)), r.public, nil
}

// makePermanent makes a whole permanent identity of is with crypto/rand.
func makePermanent(is *Issuer) (*readyPermanent, error) {
	userID, err := uuid.NewRandom()
	if err != nil {
		return nil, fmt.Errorf("create permanent identity: user id: %w", err)
	}
	id := userID.String()
	perm, err := newPermanent(is.appID, is.appSecret, id, nil)
	if err != nil {
		return nil, fmt.Errorf("create permanent identity: %w", err)
	}
	defer perm.wipe()
	return &readyPermanent{userID: id, secret: perm.secretIdentity(), public: perm.PublicIdentity()}, nil
}

// queueOf returns the queue of is, registering it the first time, and records that is was
// asked for an identity now.
func (p *KeyPool) queueOf(is *Issuer) *permanentQueue {
	p.permMu.RLock()
	q := p.perm[is]
	if q != nil {
		q.last.Store(p.draws.Add(1)) // under permMu, so the filler's view of who asks is stable
		p.permMu.RUnlock()
		return q
	}
	p.permMu.RUnlock()
	p.permMu.Lock()
	defer p.permMu.Unlock()
	if q = p.perm[is]; q == nil {
		q = &permanentQueue{is: is, ready: make(chan *readyPermanent, p.size)}
		if p.closed.Load() || is.dropped {
			// A closed pool queues nothing, nor does any pool for a dropped Issuer (a request
			// that held it when its app was deleted): every take misses.
			q.evicted = true
			return q
		}
		p.perm[is] = q
	}
	q.last.Store(p.draws.Add(1))
	return q
}

// asking reports whether q's Issuer was asked for one of the last p.permCap identities, at
// draw count now.
func (p *KeyPool) asking(q *permanentQueue, now int64) bool {
	return now-q.last.Load() < int64(p.permCap)
}

// permState is what the filler sees of the permanent queues at one moment.
type permState struct {
	now   int64 // KeyPool.draws
	share int   // each asking Issuer's share of the ready identities
	total int   // identities ready in all
	idle  int   // of them, those of Issuers no longer asking: room that can be taken
}

// stateLocked returns what the filler sees of the permanent queues, and forgets the queues
// neither asked nor holding anything; permMu must be held for writing.
func (p *KeyPool) stateLocked() permState {
	s := permState{now: p.draws.Load()}
	asking := 0
	for is, q := range p.perm {
		n := len(q.ready)
		s.total += n
		switch {
		case p.asking(q, s.now):
			asking++
		case n == 0:
			q.evicted = true
			delete(p.perm, is)
		default:
			s.idle += n
		}
	}
	if asking > 0 {
		s.share = min(p.size, p.permCap/asking)
	}
	return s
}

// permanentWanted returns the queues of Issuers asking that hold less than their share, the
// emptiest first, as many as there is room for: the filler makes one identity for each.
func (p *KeyPool) permanentWanted() []*permanentQueue {
	p.permMu.Lock()
	defer p.permMu.Unlock()
	s := p.stateLocked()
	var want []*permanentQueue
	for _, q := range p.perm {
		if p.asking(q, s.now) && len(q.ready) < s.share {
			want = append(want, q)
		}
	}
	slices.SortFunc(want, func(a, b *permanentQueue) int {
		return cmp.Or(cmp.Compare(len(a.ready), len(b.ready)), cmp.Compare(a.last.Load(), b.last.Load()))
	})
	return want[:max(0, min(len(want), p.permCap-s.total+s.idle))]
}

// Drop wipes and forgets the identities made ahead of time by is, and makes none with it
// again: the caller no longer uses is (its app's secret changed, or the app is gone). A
// request still holding is then makes its identity on its own path.
func (p *KeyPool) Drop(is *Issuer) {
	if p == nil {
		return
	}
	p.permMu.Lock()
	defer p.permMu.Unlock()
	is.dropped = true
	if q := p.perm[is]; q != nil {
		q.evict()
		delete(p.perm, is)
	}
}

// queuePermanent puts r in q if q's Issuer is still asking and q below its share, taking the
// room from an Issuer no longer asking when the pool holds permCap identities; otherwise (q
// evicted, or the Issuers asking changed while r was made) r is wiped.
func (p *KeyPool) queuePermanent(q *permanentQueue, r *readyPermanent) {
	p.permMu.Lock()
	defer p.permMu.Unlock()
	s := p.stateLocked()
	if !q.evicted && p.asking(q, s.now) && len(q.ready) < s.share && p.roomLocked(s) {
		select {
		case q.ready <- r: // only the filler sends, so there is room
			return
		default:
		}
	}
	clear(r.secret)
}

// roomLocked reports whether the pool can take one more permanent identity, making room if it
// holds permCap: it wipes the oldest identity of the queue drawn from least recently among
// those of Issuers no longer asking. Queues of Issuers still asking are never cut: one holding
// more than its share (it had the room before more Issuers asked) shrinks as it is drawn from,
// not refilled, so nothing still wanted is wiped. permMu must be held for writing.
func (p *KeyPool) roomLocked(s permState) bool {
	if s.total < p.permCap {
		return true
	}
	var victim *permanentQueue
	for _, q := range p.perm {
		if len(q.ready) > 0 && !p.asking(q, s.now) && (victim == nil || q.last.Load() < victim.last.Load()) {
			victim = q
		}
	}
	if victim == nil {
		return false
	}
	select {
	case r := <-victim.ready:
		clear(r.secret)
	default: // taken meanwhile by a creation: that made the room
	}
	return true
}

// evict marks q evicted and wipes what it holds; KeyPool.permMu must be held for writing.
func (q *permanentQueue) evict() {
	q.evicted = true
	for {
		select {
		case r := <-q.ready:
			clear(r.secret)
		default:
			return
		}
	}
}

// Provisional returns the b64 secret provisional identity of (target, value) and its public
// identity, as CreateProvisionalPair does with crypto/rand, with both key pairs taken from the
// pool.
func (p *KeyPool) Provisional(appID []byte, target, value string) (secret, public string, err error) {
	return provisionalPair(appID, target, func() (*Provisional, error) { return newProvisionalKeys(appID, target, value, p) })
}
