package exitpg_test

import (
	"net/http"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// Stopping PostgreSQL during decrypts gives database_unavailable (503), and once it is back
// the same server decrypts again, without a restart. Not parallel: it stops the cluster.
func TestDatabaseDownThenBack(t *testing.T) {
	// A one-key cache: nearly every decrypt asks the database.
	l, in := exitpgtest.ServedWithIdentities(t, gen.Options{Users: 8, Groups: 2, Resources: 30, Seed: 11}, 1)
	var ok []dump.ManifestEntry
	for _, e := range l.Manifest {
		if e.Expected == dump.ExpectOK {
			ok = append(ok, e)
		}
	}
	require.Greater(t, len(ok), 10)
	decryptAll := func() map[string]int {
		codes := map[string]int{}
		for _, e := range ok {
			status, got := in.Decrypt(t, filepath.Join(l.Dir, e.File))
			if status == 200 {
				require.Equal(t, e.SHA256, got)
				got = "ok"
			}
			codes[got]++
		}
		return codes
	}
	require.Equal(t, map[string]int{"ok": len(ok)}, decryptAll())

	// Decrypts keep going from three clients while the database stops and starts.
	var (
		mu      sync.Mutex
		seen    = map[string]int{}
		stop    = make(chan struct{})
		workers sync.WaitGroup
	)
	for w := range 3 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			for i := w; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				e := ok[i%len(ok)]
				status, got, _, err := in.TryDecrypt(filepath.Join(l.Dir, e.File))
				if err != nil {
					got = "request failed: " + err.Error()
				}
				if status == 200 {
					if got != e.SHA256 {
						got = "wrong clear text"
					} else {
						got = "ok"
					}
				}
				mu.Lock()
				seen[got]++
				mu.Unlock()
			}
		}()
	}
	count := func(code string) int {
		mu.Lock()
		defer mu.Unlock()
		return seen[code]
	}
	waitFor := func(what string, cond func() bool) {
		deadline := time.Now().Add(60 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				close(stop)
				workers.Wait()
				t.Fatalf("timed out waiting for %s: %v", what, seen)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("decrypts before the stop", func() bool { return count("ok") > 20 })

	pgtest.Stop(t)
	stopped := true
	defer func() {
		if stopped {
			pgtest.Start(t)
		}
	}()
	waitFor("503 answers while the database is down", func() bool { return count("database_unavailable") > 20 })
	req, _ := http.NewRequest("GET", in.URL+"/readyz", nil)
	req.Header.Set("Authorization", "Bearer "+exitpgtest.Token)
	resp, err := in.HTTP.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 503, resp.StatusCode)

	pgtest.Start(t)
	stopped = false
	okBefore := count("ok")
	waitFor("decrypts again once the database is back", func() bool { return count("ok") > okBefore+2*len(ok) })
	close(stop)
	workers.Wait()
	for code, n := range seen {
		require.Contains(t, []string{"ok", "database_unavailable"}, code, "%d answers %q: only successes and 503 (%v)", n, code, seen)
	}
	t.Logf("answers during the run: %v", seen)
	require.Equal(t, map[string]int{"ok": len(ok)}, decryptAll(), "recovered without a restart")
}
