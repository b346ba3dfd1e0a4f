package cli

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestProgressText(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		done, total int64
		elapsed     time.Duration
		want        string
	}{
		{0, 0, 0, "importing"},
		{0, 0, time.Hour, "importing"},
		{0, 340, 0, "importing 0/340"},
		{0, 340, 10 * time.Second, "importing 0/340"},
		{12, 0, 2 * time.Second, "importing 12 (6/s)"},
		{12, 340, 500 * time.Millisecond, "importing 12/340"},
		{100, 340, 4 * time.Second, "importing 100/340 (25/s, 10s left)"},
		{3, 10, 60 * time.Second, "importing 3/10 (3/min, 2m20s left)"},
		{1, 10, 2 * time.Hour, "importing 1/10"},
		{340, 340, 10 * time.Second, "importing 340/340 (34/s)"},
	} {
		require.Equal(t, tc.want, progressText("importing", tc.done, tc.total, tc.elapsed), "%+v", tc)
	}
}

// The bar as a terminal shows it, from its first frame: never a zero rate, never an empty
// total.
func TestProgressBarNeverShowsZeroRateOrEmptyTotal(t *testing.T) {
	t.Parallel()
	for _, total := range []int64{0, 5} {
		var buf bytes.Buffer
		pr := &progress{w: &buf, start: time.Now(), stage: "decrypting files", total: total, bar: newBar(&buf, "decrypting files", total)}
		pr.Update("decrypting files", 0, total)
		require.NoError(t, pr.bar.RenderBlank())
		pr.Update("decrypting files", 1, total)
		pr.Fail()
		out := buf.String()
		require.Contains(t, out, "decrypting files")
		for _, bad := range []string{"it/hr", "it/min", "it/s", "(0/-)", "/-)", "0/s"} {
			require.NotContains(t, out, bad, "total %d:\n%q", total, out)
		}
	}
}
