package exitpg_test

import (
	"context"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"idvault/app/exitclient"
	"idvault/exit/dump"
	"idvault/exit/pgtest"
)

// Stopping PostgreSQL during decrypts gives database_unavailable (503), and once it is back
// the same server decrypts again, without a restart. Not parallel: it stops the cluster.
func TestDatabaseDownThenBack(t *testing.T) {
	l := loadDump(t, dump.Options{Users: 8, Groups: 2, Resources: 30, Seed: 11})
	in := serve(t, l, 1) // a one-key cache: nearly every decrypt asks the database
	ids := in.identities(t, l)
	_, err := in.client.Import(context.Background(), ids, exitclient.ImportOptions{})
	require.NoError(t, err)
	var ok []dump.ManifestEntry
	for _, e := range l.manifest {
		if e.Expected == dump.ExpectOK {
			ok = append(ok, e)
		}
	}
	require.Greater(t, len(ok), 10)
	decryptAll := func() map[string]int {
		codes := map[string]int{}
		for _, e := range ok {
			status, got := in.decrypt(t, filepath.Join(l.dir, e.File))
			if status == 200 {
				require.Equal(t, e.SHA256, got)
				got = "ok"
			}
			codes[got]++
		}
		return codes
	}
	require.Equal(t, map[string]int{"ok": len(ok)}, decryptAll())

	pgtest.Stop(t)
	stopped := true
	defer func() {
		if stopped {
			pgtest.Start(t)
		}
	}()
	codes := decryptAll()
	require.Greater(t, codes["database_unavailable"], len(ok)/2, "decrypts while the database is down: %v", codes)
	require.Equal(t, len(ok), codes["ok"]+codes["database_unavailable"], "nothing else than ok (cached key) or 503: %v", codes)
	req, _ := http.NewRequest("GET", in.url+"/readyz", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := in.http.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, 503, resp.StatusCode)

	pgtest.Start(t)
	stopped = false
	deadline := time.Now().Add(30 * time.Second)
	for {
		codes = decryptAll()
		if codes["ok"] == len(ok) || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.Equal(t, map[string]int{"ok": len(ok)}, codes, "recovers without a restart")
}
