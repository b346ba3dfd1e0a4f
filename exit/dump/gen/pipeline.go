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
	type result struct {
		s   *sink
		err error
	}
	type job struct {
		from, to int
		out      chan result
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pool := sync.Pool{New: func() any { return &sink{natures: map[int]int{}} }}
	pending := make(chan chan result, 2*workers)
	jobs := make(chan job)
	go func() {
		defer close(pending)
		defer close(jobs)
		for from := 0; from < n; from += chunk {
			out := make(chan result, 1)
			select {
			case pending <- out:
			case <-ctx.Done():
				return
			}
			select {
			case jobs <- job{from, min(from+chunk, n), out}:
			case <-ctx.Done():
				out <- result{err: ctx.Err()} // queued, never handed out: its result is the interrupt
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				s := pool.Get().(*sink)
				s.reset()
				var err error
				for i := j.from; i < j.to && err == nil; i++ {
					if err = ctx.Err(); err == nil {
						err = item(i, s)
					}
				}
				j.out <- result{s, err}
			}
		}()
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
