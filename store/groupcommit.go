package store

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxGroup bounds how many writes share one commit, so that one commit's latency stays bounded
// whatever the queue.
const maxGroup = 512

// maxLinger bounds how long a leader waits under load for the writers just answered to come
// back (see linger).
const maxLinger = 2 * time.Millisecond

// groupCommit lets concurrent writes share one bbolt transaction, hence one commit and one
// fsync, without making a lone write wait.
//
// It is leader/follower: a write that finds no commit in progress leads at once (no batch
// window: a lone request pays one commit, as with db.Update); writes that arrive while a commit
// is running queue up, and when it ends the first of them leads the next commit for the whole
// queue. Under load the group grows to what arrived during one fsync; when idle it is one write.
// Unlike bbolt's Batch, a lone write never waits for a timer (Batch holds every write up to
// MaxBatchDelay, 10 ms by default, when fewer than MaxBatchSize arrive).
//
// Under load the writers split into two cohorts that alternate: those in the commit running,
// and those that queued meanwhile. So a leader under load lingers (see linger) for the writers
// just answered to come back with their next write, at most half the last commit's time and
// maxLinger: with 32 writers, groups of about 32 instead of 16, for the same commit time.
//
// Every write's function runs in the shared transaction. A function that fails without having
// written anything returns its error wrapped by clean: it fails alone and the others commit.
// Any other error rolls the transaction back and every write of the group is retried alone in
// its own transaction, so a function may run twice and must decide from what it reads.
// A write is reported successful only after the commit that holds it returned: on disk.
type groupCommit struct {
	db *bolt.DB
	// check, when set, runs before each transaction; its error fails the writes (Store.checkFile).
	check func() error
	// damage, when set, records an ErrDamaged (Store.damage).
	damage *damage

	mu      sync.Mutex
	queue   []*groupWrite
	running bool
	// lastGroup, lastTime and lastEnd describe the last commit (linger's budget); arrived wakes
	// a lingering leader when a write queues.
	lastGroup int
	lastTime  time.Duration
	lastEnd   time.Time
	arrived   chan struct{}
	// noLinger turns lingering off (benchmarks compare the two).
	noLinger bool

	// commits and writes count the transactions run and the writes they held, busy the time
	// spent running them (benchmarks and tests read them to see the grouping); pages and disk
	// are bbolt's count of the pages those commits wrote and its time writing them with the meta
	// page, both fdatasyncs included.
	commits, writes, busy, pages, disk atomic.Int64
}

type groupWrite struct {
	fn  func(*bolt.Tx) error
	err error
	// done receives true when this write must lead the next commit, false when its group
	// has committed (err is then its outcome).
	done chan bool
}

// cleanError marks an error returned before the function wrote anything.
type cleanError struct{ err error }

func (e cleanError) Error() string { return e.err.Error() }
func (e cleanError) Unwrap() error { return e.err }

// clean wraps err (nil stays nil) to say that the failing function wrote nothing.
func clean(err error) error {
	if err == nil {
		return nil
	}
	return cleanError{err}
}

// update runs fn in a write transaction shared with concurrent writes and returns when that
// transaction is committed (or failed). fn's error comes back unwrapped.
func (g *groupCommit) update(fn func(*bolt.Tx) error) error {
	w := &groupWrite{fn: fn, done: make(chan bool, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, w)
	lead := !g.running
	g.running = true
	if !lead {
		select {
		case g.arrived <- struct{}{}:
		default:
		}
	}
	g.mu.Unlock()
	if !lead && !<-w.done {
		return w.err
	}
	g.linger(!lead)

	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	group := g.queue[:n:n]
	g.queue = append([]*groupWrite(nil), g.queue[n:]...)
	g.mu.Unlock()

	g.commit(group)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- true // the next leader takes whatever queued meanwhile
	} else {
		g.running = false
	}
	g.mu.Unlock()
	for _, o := range group {
		if o != w {
			o.done <- false
		}
	}
	return w.err
}

// linger is what a leader does before taking its group. Under load, the writers of the last
// group are about to come back with their next write: a leader promoted from the queue, or one
// that found no commit running although the last one, with several writes, ended less than its
// own duration ago, waits until they could have queued (as many writes as the last group held,
// beyond those already waiting when promoted), or until half the last commit's time, at most
// maxLinger, has passed. A lone writer (last group of one, or a last commit long ago) never
// waits; under load the wait is bounded by half a commit.
func (g *groupCommit) linger(promoted bool) {
	g.mu.Lock()
	want, budget := g.lingerBudget(promoted, time.Now())
	g.mu.Unlock()
	if budget <= 0 {
		return
	}
	timer := time.NewTimer(budget)
	defer timer.Stop()
	for {
		g.mu.Lock()
		n := len(g.queue)
		g.mu.Unlock()
		if n >= want {
			return
		}
		select {
		case <-g.arrived:
		case <-timer.C:
			return
		}
	}
}

// lingerBudget is how many queued writes a leader waits for, and for how long at most (0: it
// does not wait). g.mu must be held.
func (g *groupCommit) lingerBudget(promoted bool, now time.Time) (want int, budget time.Duration) {
	if g.noLinger {
		return 0, 0
	}
	want, budget = g.lastGroup, min(g.lastTime/2, maxLinger)
	if promoted {
		want += len(g.queue)
	} else if g.lastGroup <= 1 || now.Sub(g.lastEnd) >= g.lastTime {
		return 0, 0
	}
	return min(want, maxGroup), budget
}

// commit runs a group in one transaction, or each write alone when the group cannot commit.
func (g *groupCommit) commit(group []*groupWrite) {
	g.commits.Add(1)
	g.writes.Add(int64(len(group)))
	start := time.Now()
	defer func() {
		took := time.Since(start)
		g.busy.Add(int64(took))
		g.mu.Lock()
		g.lastGroup, g.lastTime, g.lastEnd = len(group), took, time.Now()
		g.mu.Unlock()
	}()
	var last *bolt.Tx
	err := g.safeUpdate(func(tx *bolt.Tx) error {
		last = tx
		for _, w := range group {
			w.err = w.fn(tx)
			var ce cleanError
			if errors.As(w.err, &ce) {
				w.err = ce.err
			} else if w.err != nil {
				return w.err
			}
		}
		return nil
	})
	if err == nil {
		st := last.Stats()
		g.pages.Add(st.GetPageCount())
		g.disk.Add(int64(st.GetWriteTime()))
		return
	}
	if len(group) == 1 {
		group[0].err = unwrapClean(err)
		return
	}
	for _, w := range group {
		w.err = unwrapClean(g.safeUpdate(w.fn))
	}
}

// safeUpdate is a write transaction (update) under guard: a panic or a memory fault in it is an
// error, ErrDamaged when bbolt met a damaged page (the transaction is rolled back), so that it
// cannot crash the server nor leave the writes queued behind it waiting forever.
func (g *groupCommit) safeUpdate(fn func(*bolt.Tx) error) error {
	if g.check != nil {
		if err := g.check(); err != nil {
			return err
		}
	}
	err := guard(g.db.Path(), func() error { return update(g.db, fn) })
	if g.damage != nil {
		g.damage.note(err)
	}
	return err
}

func unwrapClean(err error) error {
	var ce cleanError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// CommitStats are counters of the group commit since the store opened.
type CommitStats struct {
	Commits int64         // transactions committed
	Writes  int64         // writes they held: Writes/Commits is the mean group size
	Busy    time.Duration // time spent in them (fsyncs included): Busy/Commits is a commit's time
	// Pages is how many pages those commits wrote (bbolt's count, the meta pages aside), Disk
	// the part of Busy bbolt spent writing them and the meta page, both fdatasyncs included.
	Pages int64
	Disk  time.Duration
}

// Add returns the counters of c and d together; Sub, those of c since d (both taken from
// RecordCommits, d earlier).
func (c CommitStats) Add(d CommitStats) CommitStats {
	return CommitStats{c.Commits + d.Commits, c.Writes + d.Writes, c.Busy + d.Busy, c.Pages + d.Pages, c.Disk + d.Disk}
}

func (c CommitStats) Sub(d CommitStats) CommitStats {
	return c.Add(CommitStats{-d.Commits, -d.Writes, -d.Busy, -d.Pages, -d.Disk})
}

// RecordCommits returns the counters of the group commit, the write path of identity records and
// of verification codes (sends, uses and withdrawals of codes, with their throttle counters).
func (s *Store) RecordCommits() CommitStats {
	g := s.group
	return CommitStats{Commits: g.commits.Load(), Writes: g.writes.Load(), Busy: time.Duration(g.busy.Load()),
		Pages: g.pages.Load(), Disk: time.Duration(g.disk.Load())}
}

func newGroupCommit(db *bolt.DB) *groupCommit {
	return &groupCommit{db: db, arrived: make(chan struct{}, 1)}
}
