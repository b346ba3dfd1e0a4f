package requestid

import (
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// Request IDs are random version 4 UUIDs, all different, across refills of the random block
// and from concurrent requests.
func TestIDsAreDistinctRandomUUIDs(t *testing.T) {
	t.Parallel()
	const workers, each = 4, 300 // several blocks of 128
	got := make([][]string, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for range each {
				got[w] = append(got[w], newID())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, list := range got {
		for _, id := range list {
			u, err := uuid.Parse(id)
			require.NoError(t, err)
			require.Equal(t, uuid.Version(4), u.Version())
			require.Equal(t, uuid.RFC4122, u.Variant())
			require.False(t, seen[id], "id %s given twice", id)
			seen[id] = true
		}
	}
	require.Len(t, seen, workers*each)
}
