package logging

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
)

// Options.NoBuffer writes a request line out at once; Options.NoFastFormat writes the same
// bytes as the fast format, through slog's handler. Both ways, in both formats, the request log
// reads the same.
func TestRequestLogWithAndWithoutItsDevices(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	line := func(o Options) string {
		out := &external.Output{}
		log, w := New(o, out)
		LogBulk(log, now, slog.LevelInfo, "request", slog.String("method", "POST"), slog.Int("status", 200))
		if o.NoBuffer {
			require.NotEmpty(t, out.String(), "no buffer: the line is out at once")
		} else {
			require.Empty(t, out.String(), "the line waits in the buffer")
		}
		require.NoError(t, w.Close())
		return out.String()
	}
	for _, format := range []string{"text", "json"} {
		want := line(Options{Format: format})
		require.Contains(t, want, "POST")
		require.Equal(t, want, line(Options{Format: format, NoBuffer: true}), format)
		require.Equal(t, want, line(Options{Format: format, NoFastFormat: true}), format)
	}
}
