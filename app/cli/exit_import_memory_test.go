package cli_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
)

// `exit import` of a large identities file keeps a few batches in memory, not the file, whose
// size grows with the app (125,000 identities, 90 MB, for gen-dump's 100,000 users). Here a
// 40 MB file of 40,000 identities: the live heap grows by less than a quarter of it while the
// batches go out, and every identity is sent once, in order. Not parallel: the heap is the
// process's.
func TestExitImportMemoryFlat(t *testing.T) {
	const n, size = 40_000, 1000
	dir := t.TempDir()
	file := filepath.Join(dir, "identities.txt")
	f, err := os.Create(file)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for i := range n {
		fmt.Fprintf(w, "ID%07d%s\n", i, strings.Repeat("A", size-9))
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	var (
		mu   sync.Mutex
		peak uint64
		got  []string
	)
	srv := apptest.StandInExit(t, nil, func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Identities []string `json:"identities"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		runtime.GC() // what is live, not garbage waiting for the collector
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		mu.Lock()
		peak = max(peak, ms.HeapAlloc)
		for _, id := range body.Identities {
			got = append(got, strings.Clone(id[:9])) // its number only, so that the test holds no identity
		}
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"imported": %d, "already_imported": 0}`, len(body.Identities))
	})
	_, errOut, code := runExit(context.Background(), t, nil, nil, nil, "exit", "import", "--url", srv.URL, "--parallel", "1", file)
	require.Equal(t, 0, code, errOut)
	require.Contains(t, errOut, fmt.Sprintf("%d identities: %d imported", n, n))
	require.Len(t, got, n)
	for i, id := range got {
		require.Equal(t, fmt.Sprintf("ID%07d", i), id)
	}
	grown := int64(peak) - int64(base)
	require.Less(t, grown, int64(n*size/4), "the heap grew by %d MiB importing a %d MiB file", grown>>20, n*size>>20)
}

// Ctrl-C while an import of many batches is in flight: exit 130 with what is done, never a
// panic (the batches were read from the file as they went, and reading stopped mid-file).
func TestExitImportInterruptedMidFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "identities.txt")
	var b strings.Builder
	for i := range 50 {
		fmt.Fprintf(&b, "ID%07d\n", i)
	}
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	srv := apptest.StandInExit(t, nil, func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Identities []string `json:"identities"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		once.Do(cancel) // Ctrl-C once the first batch is in
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"imported": %d, "already_imported": 0}`, len(body.Identities))
	})
	_, errOut, code := runExit(ctx, t, nil, nil, nil, "exit", "import", "--url", srv.URL, "--batch", "2", "--parallel", "1", file)
	require.Equal(t, 130, code, errOut)
	clitest.OneLine(t, errOut)
	require.Contains(t, errOut, "interrupted: ")
	require.Contains(t, errOut, "of 50 identities handled")
	require.NotContains(t, errOut, "changed while")
}
