package exitserver_test

import (
	"bytes"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/exitserver"
	"github.com/idvault/idvault/app/exitserver/exitfake"
)

// A flood of batches of empty items, whose answers are many times their bodies (an error per
// item), stays inside memory_budget: each batch reserves its answer at its worst before it is
// decrypted, so with room for one such batch, they run one at a time, and those that cannot
// wait get 503 server_busy.
func TestDecryptBatchFloodStaysInTheBudget(t *testing.T) {
	t.Parallel()
	const budget = 4 << 20 // one batch of 10 000 empty items reserves about 3.2 MB
	srv := exitserver.New(exitfake.New(), exitserver.Config{MemoryBudget: budget})
	url, client := apptest.ServeServer(t, srv)
	body := make([]byte, exitserver.DecryptBatchItems) // each byte an empty item
	var mu sync.Mutex
	var answered, busy int
	var largest int64
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			resp, err := client.Post(url+"/v1/decrypt-batch", "application/octet-stream", bytes.NewReader(body))
			if !assert(t, err == nil, "post: %v", err) {
				return
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil && resp.StatusCode == 200:
				answered++
				largest = max(largest, int64(len(raw)))
			case err == nil && resp.StatusCode == 503 && bytes.Contains(raw, []byte(`"server_busy"`)):
				busy++
			default:
				t.Errorf("status %d, err %v: %.200s", resp.StatusCode, err, raw)
			}
		})
	}
	wg.Wait()
	require.Positive(t, answered)
	require.Greater(t, largest, int64(10*len(body)), "an answer is many times its body")
	m := srv.Memory()
	require.LessOrEqual(t, m.Peak, int64(budget), "never more reserved than the budget")
	require.GreaterOrEqual(t, m.Peak, largest+int64(len(body)), "a batch reserves its answer and its body")
	require.Eventually(t, func() bool { return srv.Memory().Reserved == 0 }, 10*time.Second, 10*time.Millisecond)
	t.Logf("%d answered, %d busy, peak reserved %d bytes for answers of %d bytes", answered, busy, m.Peak, largest)
}

func assert(t *testing.T, ok bool, format string, args ...any) bool {
	t.Helper()
	if !ok {
		t.Errorf(format, args...)
	}
	return ok
}
