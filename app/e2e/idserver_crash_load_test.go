package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/idservertest"
)

func postPublicIdentity(client *http.Client, base, email string) (string, int, error) {
	body, _ := json.Marshal(map[string]string{"email": email})
	resp, err := client.Post(base+"/public_identity", "application/json", bytes.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	var r struct {
		PublicIdentity string `json:"publicIdentity"`
	}
	if resp.StatusCode == http.StatusOK {
		err = json.NewDecoder(resp.Body).Decode(&r)
	}
	return r.PublicIdentity, resp.StatusCode, err
}

// kill -9 while 32 keep-alive clients create identities as fast as the server answers, so that
// writes share commits: after a restart, every answer the server gave is still true (same user
// ID and identity for POST /identity, same public identity for POST /public_identity).
func TestBinaryCrashUnderConcurrentLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	env := binaryEnv(t, dir)
	p := apptest.Start(t, dir, env)
	const clients = 32
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: clients}}

	var (
		mu      sync.Mutex
		records = map[string]idservertest.Record{} // acknowledged POST /identity
		publics = map[string]string{}              // acknowledged POST /public_identity
		count   atomic.Int64
		wg      sync.WaitGroup
	)
	for g := range clients {
		wg.Go(func() {
			for i := 0; ; i++ {
				email := fmt.Sprintf("load-%d-%d@example.com", g, i)
				if i%2 == 0 {
					r, status, err := postIdentity(client, p.URL, email)
					if err != nil {
						return // the server is gone
					}
					if status == http.StatusOK {
						mu.Lock()
						records[email] = r
						mu.Unlock()
					}
				} else {
					pub, status, err := postPublicIdentity(client, p.URL, email)
					if err != nil {
						return
					}
					if status == http.StatusOK {
						mu.Lock()
						publics[email] = pub
						mu.Unlock()
					}
				}
				count.Add(1)
			}
		})
	}
	killUnderLoad(t, p, &wg, &count, 1500, 15*time.Second)
	require.GreaterOrEqual(t, count.Load(), int64(200), "the load made progress before the crash")

	p2 := apptest.Start(t, dir, env)
	work := make(chan string)
	failures := make(chan string, clients)
	var checkers sync.WaitGroup
	for range clients {
		checkers.Go(func() {
			for email := range work {
				if want, ok := records[email]; ok {
					got, status, err := postIdentity(client, p2.URL, email)
					if err != nil || status != http.StatusOK || got.ID != want.ID || got.ServiceIdentity != want.ServiceIdentity {
						failures <- fmt.Sprintf("%s: acknowledged identity lost or changed (status %d, err %v)", email, status, err)
						return
					}
					continue
				}
				got, status, err := postPublicIdentity(client, p2.URL, email)
				if err != nil || status != http.StatusOK || got != publics[email] {
					failures <- fmt.Sprintf("%s: acknowledged public identity lost or changed (status %d, err %v)", email, status, err)
					return
				}
			}
		})
	}
	go func() {
		defer close(work)
		for email := range records {
			work <- email
		}
		for email := range publics {
			work <- email
		}
	}()
	checkers.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
	t.Logf("%d identities and %d public identities acknowledged before kill -9, all found after", len(records), len(publics))
	p2.Stop(t)
}
