package table

import (
	"context"
	"sync"
)

// decryptsInFlight is the batches a worker decrypts at once: the exit servers' answers are
// awaited while the next batch is read and the one before is written. With several workers,
// each decrypts one at a time: the others keep the servers busy, and memory stays smaller.
func (r *run) decryptsInFlight() int {
	if r.opts.Workers == 1 {
		return 2
	}
	return 1
}

// work runs the ranges left, Options.Workers at a time; each worker reads, decrypts and
// writes one range's batches in a pipeline (the next batch read and another decrypted while
// one is written), committing them in key order. The first error stops every worker.
func (r *run) work(ctx context.Context, ranges []*keyRange) error {
	ctx, stop := withFirstError(ctx)
	defer stop.cancel()
	fail := stop.fail
	queue := make(chan *keyRange, len(ranges))
	for _, rg := range ranges {
		queue <- rg
	}
	close(queue)
	var wg sync.WaitGroup
	for range min(r.opts.Workers, max(len(ranges), 1)) {
		wg.Go(func() {
			for rg := range queue {
				if ctx.Err() != nil {
					return
				}
				if err := r.doRange(ctx, rg); err != nil {
					fail(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return stop.err()
}

// doRange runs one range to its end.
func (r *run) doRange(ctx context.Context, rg *keyRange) error {
	ctx, stop := withFirstError(ctx)
	defer stop.cancel()
	fail := stop.fail
	// The reader hands each batch to the writer's queue, in key order, and to one of the
	// decryptions; the writer takes them in order as each is decrypted. A lone worker holds
	// decryptsInFlight+2 batches at most; one of several holds two (the one written or
	// decrypted, the next read), the others' batches keeping the servers and the database busy.
	inFlight := r.decryptsInFlight()
	queued := inFlight
	if r.opts.Workers > 1 {
		queued = 0
	}
	pending := make(chan *batch, queued)
	work := make(chan *batch)
	var wg sync.WaitGroup
	wg.Go(func() { r.readRange(ctx, rg, pending, work, fail) })
	for range inFlight {
		wg.Go(func() { r.decryptAll(ctx, work, fail) })
	}
	r.writeInOrder(ctx, pending, fail)
	stop.cancel()
	for range pending {
	}
	wg.Wait()
	return stop.err()
}

// readRange reads rg's batches from its last committed key to its end, and hands each to
// pending (the writer's queue) and then to work (the decryptions), until the first error or
// ctx ends. It closes both when it returns.
func (r *run) readRange(ctx context.Context, rg *keyRange, pending, work chan<- *batch, fail func(error)) {
	defer close(pending)
	defer close(work)
	prev := rg.last
	for {
		b, err := r.src.readBatch(ctx, rg, prev, r.opts.BatchRows)
		if err != nil {
			fail(err)
			return
		}
		b.done = make(chan struct{})
		select {
		case pending <- b:
		case <-ctx.Done():
			return
		}
		select {
		case work <- b:
		case <-ctx.Done():
			return
		}
		if b.end {
			return
		}
		prev = b.last
	}
}

// decryptAll decrypts the batches of work until it is closed, closing each one's done
// whether or not its decryption failed.
func (r *run) decryptAll(ctx context.Context, work <-chan *batch, fail func(error)) {
	for b := range work {
		if err := r.decrypt(ctx, b); err != nil {
			fail(err)
		}
		close(b.done)
	}
}

// writeInOrder writes the batches of pending in their order (the keys'), each once it is
// decrypted, and counts them, until the first error or ctx ends.
func (r *run) writeInOrder(ctx context.Context, pending <-chan *batch, fail func(error)) {
	for b := range pending {
		select {
		case <-b.done:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			return
		}
		if err := r.write(ctx, b); err != nil {
			fail(err)
			return
		}
		r.committed(b)
		b.release()
	}
}

// committed counts a written batch and reports the progress.
func (r *run) committed(b *batch) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done.add(b.counts)
	r.thisRn += b.counts.rows
	if r.opts.Progress != nil {
		r.opts.Progress(Progress{Done: r.done.rows, Total: max(r.total, r.done.rows), Failed: r.done.failed})
	}
}

// firstError keeps the first error of several goroutines and cancels their context on it.
type firstError struct {
	once   sync.Once
	first  error
	cancel context.CancelFunc
}

func withFirstError(ctx context.Context) (context.Context, *firstError) {
	ctx, cancel := context.WithCancel(ctx)
	return ctx, &firstError{cancel: cancel}
}

// fail records err if it is the first, and cancels the context.
func (f *firstError) fail(err error) { f.once.Do(func() { f.first = err; f.cancel() }) }

// err is the first error recorded (read after the goroutines are done).
func (f *firstError) err() error { return f.first }
