package e2e_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/clitest"
)

// The real binary under a real SIGINT, as Ctrl-C sends it.
func TestExitDecryptSIGINT(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	clitest.WriteFiles(t, in, 6)
	srv := apptest.HangingDecrypt(t, 2)
	cmd := exec.Command(apptest.Binary(t), "exit", "decrypt", "--url", srv.URL, "--in", in, "--out", out, "--jobs", "1")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	apptest.CancelWhenPart(out, srv.Hung, func() { _ = cmd.Process.Signal(syscall.SIGINT) })
	err := cmd.Wait()
	clitest.RequireInterrupted(t, out, stdout.String(), stderr.String(), apptest.ExitCode(t, err))
}
