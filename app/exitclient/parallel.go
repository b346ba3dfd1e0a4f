package exitclient

import (
	"context"
	"sync"
)

// inParallel calls work on each item, jobs calls at a time, handing items out in order; it
// hands out no more once ctx ends, and returns when every call has returned. The bulk runs
// (DecryptTree's files, Import's batches) share it.
func inParallel[T any](ctx context.Context, jobs int, items []T, work func(T)) {
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
	for _, it := range items {
		select {
		case next <- it:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
}
