package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apierr"
	"github.com/idvault/idvault/app/apptest"
)

// damagedDataDir makes a data file with one app (its ID is returned) in a new directory, with the
// server stopped.
func damagedDataDir(t *testing.T) (dir string, env []string, appID string) {
	t.Helper()
	dir = t.TempDir()
	env = apptest.DataEnv(t, dir)
	apptest.InitData(t, dir, env)
	out, errOut, code := apptest.RunCLI(t, dir, env, "app", "create", "--name", "damage-probe", "--env")
	require.Equal(t, 0, code, errOut)
	return dir, env, regexp.MustCompile(`APP_ID='([^']+)'`).FindStringSubmatch(out)[1]
}

// occurrences are the offsets of s in data (at least one).
func occurrences(t *testing.T, data []byte, s string) []int {
	t.Helper()
	var at []int
	for i := 0; ; {
		j := bytes.Index(data[i:], []byte(s))
		if j < 0 {
			break
		}
		at, i = append(at, i+j), i+j+1
	}
	require.NotEmpty(t, at)
	return at
}

// overwrite writes b at off in the data file, as a disk fault would.
func overwrite(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

// A data file whose apps page is damaged (its element headers overwritten) stops app list,
// app show, backup and serve with the clear error: the file, that it is damaged, what to do,
// and exit code 1; never a Go panic or a crash.
func TestDamagedDataFileIsNamedByEveryCommand(t *testing.T) {
	t.Parallel()
	dir, env, appID := damagedDataDir(t)
	path := filepath.Join(dir, "idvault.db")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, at := range occurrences(t, data, `"damage-probe"`) { // the live page and any freed copy
		overwrite(t, path, int64(at/4096*4096+16), bytes.Repeat([]byte{0xA5, 0x17, 0xFF}, 16))
	}

	for _, args := range [][]string{{"app", "list"}, {"app", "show", appID}, {"backup", "--out", filepath.Join(dir, "b.db")}, {"serve"}} {
		out, errOut, code := apptest.RunCLI(t, dir, env, args...)
		require.Equal(t, 1, code, "%v: %s", args, errOut)
		require.Empty(t, out, args)
		require.Contains(t, errOut, "the data file "+path+" is damaged", args)
		require.Contains(t, errOut, "restore the data file from a backup", args)
		require.NotContains(t, errOut, "panic", args)
		require.NotContains(t, errOut, "goroutine ", args)
	}
	_, err = os.Stat(filepath.Join(dir, "b.db"))
	require.ErrorIs(t, err, os.ErrNotExist, "no backup of a damaged file")
}

// A running server that meets a damaged page (an app record overwritten under it) answers the
// request with internal_error naming a damaged data file, logs it naming the file, stays up, and
// /readyz turns 503 with "data file damaged" from then on, so a load balancer takes it out.
func TestRunningServerMeetingDamageTurnsNotReady(t *testing.T) {
	t.Parallel()
	dir, env, _ := damagedDataDir(t)
	path := filepath.Join(dir, "idvault.db")
	srv := apptest.Start(t, dir, env)
	listApps := func() (int, string) {
		code, body := adminDo(t, srv, http.MethodGet, "/admin/apps", nil)
		return code, string(body)
	}
	code, body := listApps()
	require.Equal(t, http.StatusOK, code, body)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, at := range occurrences(t, data, `"damage-probe"`) {
		overwrite(t, path, int64(at), []byte("\"\x16\x00\x17"))
	}

	code, body = listApps()
	require.Equal(t, http.StatusInternalServerError, code, body)
	var e struct {
		Error struct{ Code, Message string }
	}
	require.NoError(t, json.Unmarshal([]byte(body), &e), body)
	require.Equal(t, "internal_error", e.Error.Code, body)
	require.Equal(t, apierr.MsgStorageDamaged, e.Error.Message, body)
	require.NotContains(t, body, path, "the client is not told server paths")

	var ready struct {
		Status string
		Checks map[string]string
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(srv.URL + "/readyz")
		require.NoError(t, err)
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&ready))
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable || time.Now().After(deadline) {
			require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
			break
		}
	}
	require.Equal(t, "failed: data file damaged", ready.Checks["store"], ready)
	resp, err := http.Get(srv.URL + "/healthz")
	require.NoError(t, err, "the server stays up")
	resp.Body.Close()
	logs := srv.Stderr.String()
	require.Contains(t, logs, "the data file "+path+" is damaged")
	require.NotContains(t, logs, "panic")
}
