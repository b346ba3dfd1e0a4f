package e2e_test

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
)

// Ctrl-C (SIGINT) in the middle of a long command, to the real binary: it stops, says
// "interrupted", and prints no Go error text.
func TestCtrlCInALongCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "dump")
	cmd := exec.Command(apptest.Binary(t), "exit", "gen-dump", "--out", out, "--users", "1000000")
	var errb bytes.Buffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	// Wait (at most 30 s) until it is at work: its output directory exists.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(out); err == nil {
			break
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	code := apptest.ExitCode(t, cmd.Wait())
	require.Equal(t, 1, code, errb.String())
	require.Contains(t, errb.String(), "idvault exit gen-dump: interrupted\n")
	require.NotContains(t, errb.String(), "context canceled")
	require.NotContains(t, errb.String(), "goroutine ")
}

// A hangup (the terminal of a server run by hand closing) stops `idvault serve` as SIGTERM
// does: requests in flight finish and the store is closed, where Go's default would end the
// process at once; then the process ends by the hangup. Under nohup (SIGHUP ignored from the
// start) it stays ignored.
func TestHangupStopsServeCleanlyUnlessIgnored(t *testing.T) {
	t.Parallel()
	// Run under nohup, this test process ignores SIGHUP, and so would the servers it starts (an
	// ignored signal stays ignored across exec). A handler here is reset to the default across
	// exec: the servers get the disposition a terminal's hangup meets.
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	dir := t.TempDir()
	p := apptest.Start(t, dir, apptest.DataEnv(t, dir))
	require.NoError(t, p.Cmd.Process.Signal(syscall.SIGHUP))
	err := p.Cmd.Wait()
	require.Contains(t, p.Stderr.String(), "idvault stopped cleanly")
	// Once stopped cleanly, the process ends by the hangup, as a supervisor should see it
	// (the unit idvault init writes restarts it on that).
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, p.Stderr.String())
	ws, ok := ee.Sys().(syscall.WaitStatus)
	require.True(t, ok)
	require.True(t, ws.Signaled() && ws.Signal() == syscall.SIGHUP, "want an end by SIGHUP, got %v", ee)

	env := apptest.DataEnv(t, dir)
	cmd := exec.Command("sh", "-c", `trap '' HUP; exec "$0" serve`, apptest.Binary(t))
	cmd.Env = append(os.Environ(), env...)
	var errb apptest.LogBuffer
	cmd.Stderr = &errb
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	healthy := func() bool { // at the address the server writes once it listens (port 0)
		url := apptest.AddrURL(filepath.Join(dir, "idvault.db"))
		if url == "" {
			return false
		}
		resp, err := http.Get(url + "/healthz")
		if err == nil {
			resp.Body.Close()
		}
		return err == nil && resp.StatusCode == http.StatusOK
	}
	for deadline := time.Now().Add(30 * time.Second); !healthy() && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	require.True(t, healthy(), errb.String())
	require.NoError(t, cmd.Process.Signal(syscall.SIGHUP))
	time.Sleep(200 * time.Millisecond) // a handled hangup would have begun the shutdown by now
	require.True(t, healthy(), "an ignored hangup stops nothing: %s", errb.String())
	require.NoError(t, cmd.Process.Signal(syscall.SIGTERM))
	require.Equal(t, 0, apptest.ExitCode(t, cmd.Wait()), errb.String())
	require.Equal(t, 1, strings.Count(errb.String(), "shutting down"), "one shutdown, the SIGTERM's")
}
