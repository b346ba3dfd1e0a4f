package cli_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest/external"
)

// aptRoot is a package database of the test's own for .ci/apt-install (IDVAULT_APT_OPTIONS): a
// copy of the system's dpkg status, no package sources, its own lists and cache, so its locks
// are files of the test's and the system's apt is never locked, read past or written. It
// returns the options and the path of its dpkg frontend lock.
func aptRoot(t *testing.T) (options, lock string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("apt-get install runs as root")
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		t.Skip("no apt-get")
	}
	status, err := os.ReadFile("/var/lib/dpkg/status")
	if err != nil {
		t.Skipf("no dpkg status: %v", err)
	}
	root := t.TempDir()
	for _, d := range []string{"dpkg", "lists/partial", "cache/archives/partial", "sources.list.d"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	require.NoError(t, os.WriteFile(filepath.Join(root, "dpkg", "status"), status, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sources.list"), nil, 0o644))
	options = strings.Join([]string{
		"-o Dir::State::status=" + filepath.Join(root, "dpkg", "status"),
		"-o Dir::State::extended_states=" + filepath.Join(root, "extended_states"),
		"-o Dir::State::Lists=" + filepath.Join(root, "lists"),
		"-o Dir::Cache=" + filepath.Join(root, "cache"),
		"-o Dir::Etc::SourceList=" + filepath.Join(root, "sources.list"),
		"-o Dir::Etc::SourceParts=" + filepath.Join(root, "sources.list.d"),
	}, " ")
	return options, filepath.Join(root, "dpkg", "lock-frontend")
}

// holdLock takes the lock dpkg and apt take on path (an fcntl write lock) until release.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	require.NoError(t, err)
	require.NoError(t, syscall.FcntlFlock(f.Fd(), syscall.F_SETLK, &syscall.Flock_t{Type: syscall.F_WRLCK}))
	return func() { f.Close() }
}

// The installers under .ci/ wait for the package manager's lock, held by another install,
// instead of failing at once, saying so once; once it is released they go on. The wait is
// bounded: past IDVAULT_APT_LOCK_WAIT they fail naming the lock and its holder.
func TestAptInstallWaitsForThePackageManagersLock(t *testing.T) {
	external.Short(t, ".ci/apt-install")
	t.Parallel()
	options, lock := aptRoot(t)
	script, err := filepath.Abs(filepath.Join("..", "..", ".ci", "apt-install"))
	require.NoError(t, err)
	installer := func(wait string) *exec.Cmd {
		cmd := exec.Command("bash", script, "install-test", "install bash", "bash")
		cmd.Env = append(os.Environ(), "IDVAULT_APT_OPTIONS="+options, "IDVAULT_APT_LOCK_WAIT="+wait)
		return cmd
	}

	// Released while it waits: it goes on and succeeds.
	release := holdLock(t, lock)
	cmd := installer("600")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	var out []string
	lines := bufio.NewScanner(stdout)
	for lines.Scan() {
		out = append(out, lines.Text())
		if strings.HasPrefix(lines.Text(), "install-test: waiting for the package manager's lock "+lock) {
			release()
		}
	}
	release()
	require.NoError(t, cmd.Wait(), "stdout:\n%s\nstderr:\n%s", strings.Join(out, "\n"), stderr.String())
	waits := 0
	for _, l := range out {
		if strings.Contains(l, "waiting for the package manager's lock") {
			waits++
			require.Contains(t, l, fmt.Sprintf("held by process %d", os.Getpid()))
			require.Contains(t, l, "at most 600s")
		}
	}
	require.Equal(t, 1, waits, "said once:\n%s", strings.Join(out, "\n"))

	// Never released: it gives up after the bound, naming the lock and what to do.
	release = holdLock(t, lock)
	defer release()
	errOut, err := installer("1").CombinedOutput()
	require.Error(t, err)
	require.Contains(t, string(errOut), "install-test: the package manager's lock "+lock+" is still held after 1s")
	require.Contains(t, string(errOut), "raise IDVAULT_APT_LOCK_WAIT")
}
