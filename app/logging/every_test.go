package logging

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Every says yes once, then no until its period has passed.
func TestEverySaysYesOncePerPeriod(t *testing.T) {
	t.Parallel()
	e := &Every{Period: time.Minute}
	now := time.Now()
	require.True(t, e.Due(now))
	require.False(t, e.Due(now.Add(59*time.Second)))
	require.True(t, e.Due(now.Add(61*time.Second)))
}
