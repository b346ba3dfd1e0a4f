package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
	"github.com/idvault/idvault/app/apptest/idservertest"
)

// binaryEnv creates an app with the CLI (server stopped) and returns the environment that
// serves it with the identity server.
func binaryEnv(t *testing.T, dir string) []string {
	t.Helper()
	env := apptest.DataEnv(t, dir)
	apptest.InitData(t, dir, env)
	stdout, stderr, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "x", "--json")
	require.Zero(t, code, "stderr: %s", stderr)
	var created clitest.Created
	require.NoError(t, json.Unmarshal([]byte(stdout), &created), stdout)
	return append(env, "IDVAULT_IDENTITY_SERVER__ENABLED=true", "IDVAULT_IDENTITY_SERVER__APP_ID="+created.App.ID)
}

func postIdentity(client *http.Client, base, email string) (idservertest.Record, int, error) {
	body, _ := json.Marshal(map[string]string{"email": email})
	resp, err := client.Post(base+"/identity", "application/json", bytes.NewReader(body))
	if err != nil {
		return idservertest.Record{}, 0, err
	}
	defer resp.Body.Close()
	var r idservertest.Record
	if resp.StatusCode == http.StatusOK {
		err = json.NewDecoder(resp.Body).Decode(&r)
	}
	return r, resp.StatusCode, err
}

func TestBinaryConcurrentIdentity(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	p := apptest.Start(t, dir, binaryEnv(t, dir))
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 100}}

	const n = 100
	got := make([]idservertest.Record, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			r, status, err := postIdentity(client, p.URL, "crowd@example.com")
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("status %d", status)
			}
			got[i], errs[i] = r, err
		})
	}
	close(start)
	wg.Wait()
	ids := map[string]bool{}
	for i := range n {
		require.NoError(t, errs[i], "request %d", i)
		require.Equal(t, got[0], got[i], "request %d got another record", i)
		ids[got[i].ID] = true
	}
	require.Len(t, ids, 1, "one id for 100 concurrent requests")
	p.Stop(t)
	require.NotContains(t, p.Stderr.String()+p.Stdout.String(), got[0].ServiceIdentity, "no identity in the log")
}

// kill -9 during a stream of creations and registrations: after a restart, every acknowledged
// record is there unchanged (same id, same identity; registered if a PATCH was acknowledged).
func TestBinaryCrashKeepsAcknowledgedRecords(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	env := binaryEnv(t, dir)
	p := apptest.Start(t, dir, env)
	client := &http.Client{Timeout: 10 * time.Second}

	type acked struct {
		r          idservertest.Record
		registered bool
	}
	var (
		mu    sync.Mutex
		seen  = map[string]*acked{}
		count atomic.Int64
		wg    sync.WaitGroup
	)
	for g := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				email := fmt.Sprintf("crash-%d-%d@example.com", g, i)
				r, status, err := postIdentity(client, p.URL, email)
				if err != nil {
					return // the server is gone
				}
				if status != http.StatusOK {
					continue
				}
				mu.Lock()
				seen[email] = &acked{r: r}
				mu.Unlock()
				count.Add(1)
				if i%3 == 0 {
					resp, err := client.Do(patchRequest(p.URL, email))
					if err != nil {
						return
					}
					resp.Body.Close()
					if resp.StatusCode == http.StatusOK {
						mu.Lock()
						seen[email].registered = true
						mu.Unlock()
					}
				}
			}
		})
	}
	killUnderLoad(t, p, &wg, &count, 150, 10*time.Second)
	require.GreaterOrEqual(t, count.Load(), int64(20), "the stream made progress before the crash")

	p2 := apptest.Start(t, dir, env)
	for email, a := range seen {
		r, status, err := postIdentity(client, p2.URL, email)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, a.r.ID, r.ID, "%s: same id after the crash", email)
		require.Equal(t, a.r.ServiceIdentity, r.ServiceIdentity, "%s: same identity after the crash", email)
		if a.registered {
			require.True(t, r.Registered, "%s: an acknowledged PATCH survives", email)
		}
	}
	t.Logf("%d acknowledged records checked after kill -9", len(seen))
	p2.Stop(t)
}

func patchRequest(base, email string) *http.Request {
	body, _ := json.Marshal(map[string]string{"email": email})
	req, _ := http.NewRequest(http.MethodPatch, base+"/identity", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

func TestBinaryRefusesUnauthenticatedRemote(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	dir := t.TempDir()
	env := append(binaryEnv(t, dir), "IDVAULT_FAKEAUTH__ENABLED=false", fmt.Sprintf("IDVAULT_SERVER__LISTEN=0.0.0.0:%d", apptest.FreePort(t)))
	require.Contains(t, serveRefused(t, dir, env), "identity_server.token")
}

// serveRefused runs `idvault serve` in dir with env added to the process's environment,
// requires it to exit non-zero within 30 s instead of starting, and returns its output.
func serveRefused(t *testing.T, dir string, env []string) string {
	t.Helper()
	bin := apptest.Binary(t) // built before the clock starts
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve")
	cmd.Env, cmd.Dir = append(os.Environ(), env...), dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "idvault started instead of refusing: %s", out)
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "output: %s", out)
	require.NotZero(t, ee.ExitCode())
	return string(out)
}

// killUnderLoad lets the clients run until count reaches want (or within passed), then kills the
// server with kill -9 while they are still sending, and waits for the clients to finish.
func killUnderLoad(t *testing.T, p *apptest.Proc, wg *sync.WaitGroup, count *atomic.Int64, want int64, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for count.Load() < want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	p.Kill9(t)
	wg.Wait()
}
