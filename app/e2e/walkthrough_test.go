package e2e_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/exit/pgtest"
)

// walkthroughMarker precedes each ```sh block of the README that the walkthrough test runs;
// exitWalkthroughMarker the block of the exit tool's walkthrough, in its guide (exit/README.md);
// tableWalkthroughMarker the block of the guide's "Tables" walkthrough.
const (
	walkthroughMarker      = "<!-- walkthrough -->"
	exitWalkthroughMarker  = "<!-- exit walkthrough -->"
	tableWalkthroughMarker = "<!-- table walkthrough -->"
)

// walkthroughBlocks returns the shell blocks of a Markdown text marked with marker, in order.
func walkthroughBlocks(t *testing.T, text, marker string) []string {
	t.Helper()
	var blocks []string
	sc := bufio.NewScanner(strings.NewReader(text))
	marked, in := false, false
	var cur []string
	for sc.Scan() {
		line := sc.Text()
		switch {
		case in && line == "```":
			blocks = append(blocks, strings.Join(cur, "\n"))
			in, cur = false, nil
		case in:
			cur = append(cur, line)
		case marked && line == "```sh":
			in, marked = true, false
		case strings.TrimSpace(line) == marker:
			marked = true
		case marked && strings.TrimSpace(line) != "":
			t.Fatalf("%s must be followed by a ```sh block, not %q", marker, line)
		}
	}
	require.False(t, in, "unterminated walkthrough block")
	return blocks
}

// guideBlock is the one shell block of the exit tool's guide (exit/README.md) marked with marker.
func guideBlock(t *testing.T, marker string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "exit", "README.md"))
	require.NoError(t, err)
	blocks := walkthroughBlocks(t, string(raw), marker)
	require.Len(t, blocks, 1, "the exit guide's walkthrough is marked with %s", marker)
	return blocks[0]
}

// guideRun is what a guide walkthrough left: its output, the directory it ran in, the exit
// server's listen address and the directory of the cluster `make pg` made.
type guideRun struct {
	text, dir, listen, pgDir string
}

// runGuideBlock runs a block of the exit tool's guide as a new user pastes it from a clone: in
// one bash, from a fresh directory holding the binary, with `make` run in the repository; only
// the ports differ (free ones: PGPORT for `make pg`, the exit server's listen address in place
// of 127.0.0.1:8000). It skips (or fails under IDVAULT_REQUIRE_EXTERNAL) without PostgreSQL or
// a tool the blocks run (each in the Debian package of its name).
func runGuideBlock(t *testing.T, block string) guideRun {
	t.Helper()
	psql := pgtest.Bin(t, "psql")
	for _, tool := range []string{"jq", "openssl", "make", "curl"} {
		apptest.Command(t, tool, tool)
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	bin, err := os.ReadFile(apptest.Binary(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "idvault"), bin, 0o755))
	listen := fmt.Sprintf("127.0.0.1:%d", apptest.FreePort(t))
	// The cluster's directory must be reachable by the postgres OS user when running as root
	// (t.TempDir's parent is 0700): a directory of its own under the system's temp directory.
	pgParent, err := os.MkdirTemp("", "idvault-exit-guide-pg-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(pgParent, 0o755))
	t.Cleanup(func() { os.RemoveAll(pgParent) })
	pgDir := filepath.Join(pgParent, "pg")
	// -e: any failing step fails the test (exit decrypt's status 1, by design, is caught by the
	// block itself and said).
	script := "set -em\nmake() { command make -C " + strconv.Quote(repo) + ` "$@"; }` + "\n" +
		strings.ReplaceAll(block, "127.0.0.1:8000", listen)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PGDIR="+pgDir, fmt.Sprintf("PGPORT=%d", apptest.FreePort(t)), "IDVAULT_EXIT__LISTEN="+listen,
		"PATH="+filepath.Dir(psql)+":"+os.Getenv("PATH"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	t.Cleanup(func() {
		if cmd.Process != nil {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
		_ = exec.Command(filepath.Join(repo, ".ci", "pg"), "stop", pgDir).Run()
	})
	require.NoError(t, cmd.Run(), "%s", out.String())
	return guideRun{text: out.String(), dir: dir, listen: listen, pgDir: pgDir}
}
