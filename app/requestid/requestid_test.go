package requestid

import (
	"strings"
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
				got[w] = append(got[w], New())
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

// A client's X-Request-ID is kept when short and made of safe characters; anything that could
// break a log line or a JSON body gets a new ID instead.
func TestPickKeepsOnlySafeIDs(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"abc-123", "A_b.c:d", strings.Repeat("x", MaxLen)} {
		require.Equal(t, id, Pick(id))
	}
	for _, id := range []string{"", `a"b`, "a b", "a\nb", "a\\b", "é", strings.Repeat("x", MaxLen+1)} {
		got := Pick(id)
		require.NotEqual(t, id, got)
		_, err := uuid.Parse(got)
		require.NoError(t, err, "%q", id)
	}
}
