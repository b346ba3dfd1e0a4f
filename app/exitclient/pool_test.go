package exitclient_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/exitclient"
)

// batchStandIn is a stand-in exit server whose decrypt-batch and decrypt "decrypt" a
// ciphertext "ct:" || clear, and fail any other with decryption_failed; dead, once set, drops
// every connection without an answer (a killed server). It counts the items it answered.
func batchStandIn(t *testing.T, dead *atomic.Bool, served *atomic.Int64) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"status": "ready"}`))
	})
	mux.HandleFunc("POST /v1/decrypt-batch", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var out []byte
		for len(body) > 0 {
			n, k := binary.Uvarint(body)
			item := body[k : k+int(n)]
			body = body[k+int(n):]
			if clear, ok := bytes.CutPrefix(item, []byte("ct:")); ok {
				out = append(out, 0)
				out = binary.AppendUvarint(out, uint64(len(clear)))
				out = append(out, clear...)
			} else {
				out = append(out, 1)
				for _, s := range []string{"decryption_failed", "the ciphertext does not decrypt"} {
					out = binary.AppendUvarint(out, uint64(len(s)))
					out = append(out, s...)
				}
			}
			served.Add(1)
		}
		_, _ = w.Write(out)
	})
	mux.HandleFunc("POST /v1/decrypt", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		served.Add(1)
		_, _ = w.Write(bytes.TrimPrefix(body, []byte("ct:")))
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if dead.Load() {
			if conn, _, err := http.NewResponseController(w).Hijack(); err == nil {
				_ = conn.Close()
			}
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A pool of two servers, one of them dead: every item is answered by the other, in order,
// batches under the server's limits and a big value alone; with both dead, the run stops once
// the budget is spent.
func TestPoolSendsToTheServersLeft(t *testing.T) {
	t.Parallel()
	var dead [2]atomic.Bool
	var served [2]atomic.Int64
	urls := []string{batchStandIn(t, &dead[0], &served[0]), batchStandIn(t, &dead[1], &served[1])}
	pool := exitclient.NewPool(urls, "", 500*time.Millisecond)
	require.NoError(t, pool.Probe(context.Background()))

	items := make([][]byte, 0, 2502)
	for i := range 2500 {
		items = append(items, []byte("ct:clear-"+string(rune('a'+i%26))))
	}
	items = append(items, []byte("not a ciphertext"), append([]byte("ct:"), bytes.Repeat([]byte("b"), 1<<20)...))
	res, err := pool.Decrypt(context.Background(), items)
	require.NoError(t, err)
	require.Equal(t, items[7][3:], res[7].Clear)
	require.Positive(t, served[0].Load())
	require.Positive(t, served[1].Load(), "both servers serve")

	dead[0].Store(true)
	served[1].Store(0)
	for range 3 {
		res, err = pool.Decrypt(context.Background(), items)
		require.NoError(t, err)
		require.Len(t, res, len(items))
		for i := range 2500 {
			require.Equal(t, items[i][3:], res[i].Clear)
		}
		require.Equal(t, "decryption_failed", res[2500].Code)
		require.Equal(t, 1<<20, len(res[2501].Clear))
	}
	require.EqualValues(t, 3*len(items), served[1].Load(), "the live server answered every item")

	dead[1].Store(true)
	_, err = pool.Decrypt(context.Background(), items)
	var unav *exitclient.UnavailableError
	require.ErrorAs(t, err, &unav)
}

// DecryptEach hands on the same results as Decrypt, each item once, the clear bytes valid
// during the call (the answers' buffers are reused: copied out, they stay right over many
// calls).
func TestPoolDecryptEach(t *testing.T) {
	t.Parallel()
	var dead atomic.Bool
	var served atomic.Int64
	pool := exitclient.NewPool([]string{batchStandIn(t, &dead, &served)}, "", time.Second)
	for round := range 5 {
		items := make([][]byte, 0, 3002)
		for i := range 3000 {
			items = append(items, fmt.Appendf(nil, "ct:round %d item %d", round, i))
		}
		items = append(items, []byte("not a ciphertext"), append([]byte("ct:"), bytes.Repeat([]byte("b"), 1<<20)...))
		want, err := pool.Decrypt(context.Background(), items)
		require.NoError(t, err)
		var mu sync.Mutex
		got := make([]exitclient.BatchResult, len(items))
		calls := make([]int, len(items))
		err = pool.DecryptEach(context.Background(), items, func(i int, r exitclient.BatchResult) {
			mu.Lock()
			defer mu.Unlock()
			calls[i]++
			r.Clear = bytes.Clone(r.Clear)
			got[i] = r
		})
		require.NoError(t, err)
		for i := range items {
			require.Equal(t, 1, calls[i], "item %d", i)
			require.Equal(t, want[i], got[i], "item %d", i)
		}
	}
}
