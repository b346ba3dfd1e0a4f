package logging

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
)

func TestBulkLinesWaitOthersFlushInOrder(t *testing.T) {
	t.Parallel()
	out := &external.Output{}
	log, w := New(Options{Level: "info", Format: "json"}, out)
	log.InfoContext(Bulk, "request", "n", 1)
	log.InfoContext(Bulk, "request", "n", 2)
	require.Empty(t, out.String(), "bulk lines are buffered")

	log.Info("listening")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 3, "an ordinary line writes out what was buffered before it")
	require.Contains(t, lines[0], `"n":1`)
	require.Contains(t, lines[1], `"n":2`)
	require.Contains(t, lines[2], `"listening"`)

	log.ErrorContext(Bulk, "request", "n", 3)
	require.Contains(t, out.String(), `"n":3`, "an error is never held back")

	log.InfoContext(Bulk, "request", "n", 4)
	require.NoError(t, w.Close())
	require.Contains(t, out.String(), `"n":4`, "Close writes out the buffer")
	log.Debug("below the level")
	require.NotContains(t, out.String(), "below the level")
}

func TestBulkLinesAreWrittenAfterTheDelay(t *testing.T) {
	t.Parallel()
	out := &external.Output{}
	log, _ := New(Options{}, out)
	log.Log(Bulk, slog.LevelInfo, "request", "n", 1)
	require.Eventually(t, func() bool { return strings.Contains(out.String(), "n=1") }, 5*time.Second, FlushDelay/5)
}

func TestAFullBufferIsWrittenAtOnce(t *testing.T) {
	t.Parallel()
	out := &external.Output{}
	log, _ := New(Options{}, out)
	attrs := log.With("pad", strings.Repeat("x", 1000))
	for range BufferSize/1000 + 1 {
		attrs.InfoContext(context.WithValue(Bulk, unrelatedKey{}, 0), "request")
	}
	require.NotEmpty(t, out.String(), "no line waits behind more than BufferSize bytes")
}

// unrelatedKey is a context key of another package's kind: a context derived from Bulk with
// values of its own is still Bulk.
type unrelatedKey struct{}
