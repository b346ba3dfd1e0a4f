package exitclient

import (
	"context"
	"iter"
	"slices"
	"sync"
)

// InParallel calls work on each item, jobs calls at a time, handing items out in order; it
// hands out no more once ctx ends, and returns when every call has returned. The bulk runs
// (tree.Decrypt's files, Import's batches) share it.
func InParallel[T any](ctx context.Context, jobs int, items []T, work func(T)) {
	inParallelSeq(ctx, jobs, slices.Values(items), work)
}

// inParallelSeq is InParallel over items drawn one at a time as the calls take them, so that
// no more than jobs+1 are out of items at once (ImportSeq's batches, read from a file).
func inParallelSeq[T any](ctx context.Context, jobs int, items iter.Seq[T], work func(T)) {
	next := make(chan T)
	var wg sync.WaitGroup
	for range jobs {
		wg.Go(func() {
			for it := range next {
				work(it)
			}
		})
	}
feed:
	for it := range items {
		select {
		case next <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
}
