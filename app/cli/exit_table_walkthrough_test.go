package cli_test

import (
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

// tableWalkthroughMarker precedes the shell block of exit/README.md's "Tables" walkthrough.
const tableWalkthroughMarker = "<!-- table walkthrough -->"

// exit/README.md's decrypt-table walkthrough, as a user pastes it: its block in one bash with
// -e, from a fresh directory holding the binary, `make` run in the repository; only the ports
// differ (free ones for `make pg` and the exit server).
func TestTableWalkthrough(t *testing.T) {
	t.Parallel()
	psql := pgtest.Bin(t, "psql")
	for _, tool := range []string{"jq", "openssl", "make", "curl"} {
		apptest.Command(t, tool, tool)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "exit", "README.md"))
	require.NoError(t, err)
	blocks := walkthroughBlocks(t, string(raw), tableWalkthroughMarker)
	require.Len(t, blocks, 1)

	repo, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	dir := t.TempDir()
	bin, err := os.ReadFile(apptest.Binary(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "idvault"), bin, 0o755))
	listen := fmt.Sprintf("127.0.0.1:%d", apptest.FreePort(t))
	pgParent, err := os.MkdirTemp("", "idvault-table-pg-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(pgParent, 0o755))
	t.Cleanup(func() { os.RemoveAll(pgParent) })
	pgDir := filepath.Join(pgParent, "pg")
	script := "set -em\nmake() { command make -C " + strconv.Quote(repo) + ` "$@"; }` + "\n" +
		strings.ReplaceAll(blocks[0], "127.0.0.1:8000", listen)
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
	text := out.String()
	require.Contains(t, text, "exit 1: the dump's negative cases fail on purpose")
	require.Contains(t, text, "every clear value is there, byte for byte")
	require.Contains(t, text, "decryption_failed")
	require.Contains(t, text, "key_not_found")
	require.Contains(t, text, `"rows_this_run":0`)
	require.Contains(t, text, `"resumed":true`)
}
