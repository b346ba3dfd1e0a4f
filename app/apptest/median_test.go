package apptest_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// Median: the middle value, the mean of the two middle ones for an even count, 0 for none;
// the caller's slice keeps its order.
func TestMedian(t *testing.T) {
	xs := []float64{5, 1, 3}
	require.Equal(t, 3.0, apptest.Median(xs))
	require.Equal(t, []float64{5, 1, 3}, xs)
	require.Equal(t, 2.5, apptest.Median([]float64{4, 1, 2, 3}))
	require.Equal(t, 0.0, apptest.Median(nil))
}
