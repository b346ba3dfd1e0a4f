package gen

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// sink collects what one item (or one chunk of items) outputs, before the ordered writer
// appends it to the dump.
type sink struct {
	rows       [numTables][]byte
	counts     [numTables]int
	identities []byte
	manifest   []byte
	keys       []byte
	sums       []byte      // SHA256SUMS lines of the ok ciphertexts
	natures    map[int]int // key publishes by nature
	resources  int
	negatives  int
}

func (s *sink) add(t int, b []byte) {
	s.rows[t] = b
	s.counts[t]++
}

// rowFor starts a row of table t on the sink's buffer; call s.add(t, r.end()) when complete.
func (s *sink) rowFor(t int) *row { return newRow(s.rows[t]) }

func (s *sink) reset() {
	for i := range s.rows {
		s.rows[i] = s.rows[i][:0]
		s.counts[i] = 0
	}
	s.identities, s.manifest, s.keys, s.sums = s.identities[:0], s.manifest[:0], s.keys[:0], s.sums[:0]
	clear(s.natures)
	s.resources, s.negatives = 0, 0
}

// runItems makes items 0..n-1 with item() on every worker, chunk items at a time, and hands
// the chunks to write() in index order. At most 2 chunks per worker are in memory.
func runItems(ctx context.Context, workers, n, chunk int, item func(i int, s *sink) error, write func(s *sink, done int) error) error {
	if n <= 0 {
		return nil
	}
	if chunk <= 0 {
		chunk = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pool := &sync.Pool{New: func() any { return &sink{natures: map[int]int{}} }}
	pending := make(chan chan chunkResult, 2*workers)
	jobs := make(chan chunkJob)
	go queueChunks(ctx, n, chunk, pending, jobs)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() { makeChunks(ctx, jobs, pool, item) })
	}
	defer wg.Wait()
	done := 0
	for out := range pending {
		r := <-out
		if r.err != nil {
			cancel()
			return r.err
		}
		done = min(done+chunk, n)
		if err := write(r.s, done); err != nil {
			cancel()
			return err
		}
		pool.Put(r.s)
	}
	return ctx.Err()
}

// chunkResult is a chunk of items made, or why it could not be.
type chunkResult struct {
	s   *sink
	err error
}

// chunkJob is a chunk to make: items from..to-1, whose result goes to out.
type chunkJob struct {
	from, to int
	out      chan chunkResult
}

// queueChunks cuts items 0..n-1 into chunks and hands each to a worker on jobs, its result
// channel queued first on pending, so that the writer takes the results in index order; a
// full pending holds the work back. It closes both when done or when ctx ends.
func queueChunks(ctx context.Context, n, chunk int, pending chan<- chan chunkResult, jobs chan<- chunkJob) {
	defer close(pending)
	defer close(jobs)
	for from := 0; from < n; from += chunk {
		out := make(chan chunkResult, 1)
		select {
		case pending <- out:
		case <-ctx.Done():
			return
		}
		select {
		case jobs <- chunkJob{from, min(from+chunk, n), out}:
		case <-ctx.Done():
			out <- chunkResult{err: ctx.Err()} // queued, never handed out: its result is the interrupt
			return
		}
	}
}

// makeChunks makes the chunks of jobs with item(), each in a sink from pool, until jobs is
// closed; a chunk stops at its first error (ctx ending is one).
func makeChunks(ctx context.Context, jobs <-chan chunkJob, pool *sync.Pool, item func(i int, s *sink) error) {
	for j := range jobs {
		s := pool.Get().(*sink)
		s.reset()
		var err error
		for i := j.from; i < j.to && err == nil; i++ {
			if err = ctx.Err(); err == nil {
				err = item(i, s)
			}
		}
		j.out <- chunkResult{s, err}
	}
}

// records is a file of fixed-size records, one per item, that later phases read back (the
// keys of user U, of group G...) without holding them in memory.
type records struct {
	f    *os.File
	size int
}

func newRecords(dir, name string, size int) (*records, error) {
	f, err := os.CreateTemp(dir, ".records-"+name+"-*")
	if err != nil {
		return nil, err
	}
	_ = os.Remove(f.Name()) // unlinked: vanishes with the process whatever happens
	return &records{f: f, size: size}, nil
}

func (r *records) put(i int, b []byte) error {
	if len(b) != r.size {
		return fmt.Errorf("record of %d bytes, want %d", len(b), r.size)
	}
	_, err := r.f.WriteAt(b, int64(i)*int64(r.size))
	return err
}

func (r *records) get(i int) ([]byte, error) {
	b := make([]byte, r.size)
	if _, err := r.f.ReadAt(b, int64(i)*int64(r.size)); err != nil {
		return nil, fmt.Errorf("read record %d: %w", i, err)
	}
	return b, nil
}

func (r *records) close() { _ = r.f.Close() }
