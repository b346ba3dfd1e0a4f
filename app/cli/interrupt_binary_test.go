package cli_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
