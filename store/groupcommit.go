package store

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
)

// maxGroup bounds how many writes share one commit, so that one commit's latency stays bounded
// whatever the queue.
const maxGroup = 512

// groupCommit lets concurrent writes share one bbolt transaction, hence one commit and one
// fsync, without making a lone write wait.
//
// It is leader/follower: a write that finds no commit in progress leads at once (no batch
// window: a lone request pays one commit, as with db.Update); writes that arrive while a commit
// is running queue up, and when it ends the first of them leads the next commit for the whole
// queue. Under load the group grows to what arrived during one fsync; when idle it is one write.
// Unlike bbolt's Batch, nothing waits for a timer (Batch holds every write up to
// MaxBatchDelay, 10 ms by default, when fewer than MaxBatchSize arrive).
//
// Every write's function runs in the shared transaction. A function that fails without having
// written anything returns its error wrapped by clean: it fails alone and the others commit.
// Any other error rolls the transaction back and every write of the group is retried alone in
// its own transaction, so a function may run twice and must decide from what it reads.
// A write is reported successful only after the commit that holds it returned: on disk.
type groupCommit struct {
	db *bolt.DB

	mu      sync.Mutex
	queue   []*groupWrite
	running bool

	// commits and writes count the transactions run and the writes they held, busy the time
	// spent running them (benchmarks and tests read them to see the grouping).
	commits, writes, busy atomic.Int64
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
	g.mu.Unlock()
	if !lead && !<-w.done {
		return w.err
	}

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

// commit runs a group in one transaction, or each write alone when the group cannot commit.
func (g *groupCommit) commit(group []*groupWrite) {
	g.commits.Add(1)
	g.writes.Add(int64(len(group)))
	start := time.Now()
	defer func() { g.busy.Add(int64(time.Since(start))) }()
	err := g.safeUpdate(func(tx *bolt.Tx) error {
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

// safeUpdate is db.Update turning a panic in fn into an error (the transaction is rolled back),
// so that one faulty write cannot leave the writes queued behind it waiting forever.
func (g *groupCommit) safeUpdate(fn func(*bolt.Tx) error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("store: write failed: panic: %v", r)
		}
	}()
	return g.db.Update(fn)
}

func unwrapClean(err error) error {
	var ce cleanError
	if errors.As(err, &ce) {
		return ce.err
	}
	return err
}

// CommitStats are counters of the identity record write path since the store opened.
type CommitStats struct {
	Commits int64         // transactions committed
	Writes  int64         // writes they held: Writes/Commits is the mean group size
	Busy    time.Duration // time spent in them (fsyncs included): Busy/Commits is a commit's time
}

// RecordCommits returns the counters of the identity record write path.
func (s *Store) RecordCommits() CommitStats {
	return CommitStats{Commits: s.group.commits.Load(), Writes: s.group.writes.Load(), Busy: time.Duration(s.group.busy.Load())}
}
