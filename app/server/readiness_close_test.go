package server

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Close cancels a check in flight and waits for it: nothing runs or logs after the server's
// shutdown, and no new round starts.
func TestReadinessCloseStopsChecksInFlight(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	started, runs := make(chan struct{}, 8), atomic.Int32{}
	hang := CheckFunc(func(ctx context.Context) error {
		runs.Add(1)
		started <- struct{}{}
		<-ctx.Done()
		return ctx.Err()
	})
	r := newReadiness(map[string]Checker{"hang": hang}, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	<-started
	begin := time.Now()
	r.close()
	require.Less(t, time.Since(begin), checkTimeout/2, "close cancels the check instead of waiting for its timeout")
	require.Empty(t, logs.String(), "nothing is logged once closed")
	r.refresh()
	time.Sleep(50 * time.Millisecond)
	require.Equal(t, int32(1), runs.Load(), "no round starts after close")
}
