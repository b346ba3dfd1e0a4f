package gen

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An interrupt while the producer has queued a chunk but not yet handed it to a worker ends
// the run with the context's error: gen-dump must not hang on Ctrl-C. The chunk after the
// one that cancels is the one left queued, so each round has a good chance to hit the gap.
func TestRunItemsStopsWhenInterrupted(t *testing.T) {
	t.Parallel()
	for round := 0; round < 200; round++ {
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			errc <- runItems(ctx, 1, 1000, 1, func(i int, s *sink) error {
				if i == 1 {
					cancel()
				}
				return nil
			}, func(*sink, int) error { return nil })
		}()
		select {
		case err := <-errc:
			require.True(t, errors.Is(err, context.Canceled), "round %d: %v", round, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: runItems still running 20 s after its context ended", round)
		}
		cancel()
	}
}
